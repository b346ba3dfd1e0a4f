package exitclient_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
)

// An input named like another's part file (x and x.idvault-part) is refused before anything is
// written, naming it: decrypting x would remove the other's finished output as a stale part.
func TestDecryptRefusesInputsNamedLikePartFiles(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	write(t, filepath.Join(in, "x"), []byte("x"))
	write(t, filepath.Join(in, "x"+exitclient.PartSuffix), []byte("the other"))
	write(t, filepath.Join(in, "d"+exitclient.PartSuffix, "y"), []byte("y"))
	write(t, filepath.Join(in, "ok"), []byte("ok"))

	rep, err := c.DecryptTree(context.Background(), in, out, exitclient.DecryptOptions{Jobs: 1})
	var cfg *exitclient.ConfigError
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), `"x.idvault-part"`)
	require.Contains(t, err.Error(), `"d.idvault-part/y"`)
	require.NotContains(t, err.Error(), `"ok"`)
	require.Zero(t, rep.Decrypted)
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing written, not even --out")

	// Sealed with age, the outputs are x.age and x.idvault-part.age, and x's part file is
	// x.age.idvault-part: no collision, so the run goes on.
	in2 := t.TempDir()
	write(t, filepath.Join(in2, "x"), []byte("x"))
	write(t, filepath.Join(in2, "x"+exitclient.PartSuffix), []byte("the other"))
	rep, err = c.DecryptTree(context.Background(), in2, out, exitclient.DecryptOptions{Suffix: ".age"})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Decrypted)
	got, err := os.ReadFile(filepath.Join(out, "x"+exitclient.PartSuffix+".age"))
	require.NoError(t, err)
	require.Equal(t, "the other", string(got))
}
