package tree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
)

// An input named like another's part file (x and x.idvault-part) is refused before anything is
// written, naming it: decrypting x would remove the other's finished output as a stale part.
func TestDecryptRefusesInputsNamedLikePartFiles(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	write(t, filepath.Join(in, "x"), []byte("x"))
	write(t, filepath.Join(in, "x"+outfiles.PartSuffix), []byte("the other"))
	write(t, filepath.Join(in, "d"+outfiles.PartSuffix, "y"), []byte("y"))
	write(t, filepath.Join(in, "ok"), []byte("ok"))

	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
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
	write(t, filepath.Join(in2, "x"+outfiles.PartSuffix), []byte("the other"))
	rep, err = tree.Decrypt(context.Background(), c, in2, out, tree.Options{Suffix: ".age"})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Decrypted)
	got, err := os.ReadFile(filepath.Join(out, "x"+outfiles.PartSuffix+".age"))
	require.NoError(t, err)
	require.Equal(t, "the other", string(got))
}

// Inputs whose outputs are equal up to case or Unicode normalisation (A.bin and a.bin; café in
// NFC and in NFD; a file d and a directory D) are refused up front, both named: macOS's default
// volumes fold them, and the second would be skipped as already done, never decrypted. The
// check is on names, so it holds on this case-sensitive volume too; --exact-names lets them
// through for volumes that tell them apart.
func TestDecryptRefusesNamesEqualUpToCase(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	nfc, nfd := "caf\u00e9.bin", "cafe\u0301.bin"
	for _, rel := range []string{"A.bin", "a.bin", nfc, nfd, "d", filepath.Join("D", "x"), "STRASSE", "straße", "ok.bin"} {
		write(t, filepath.Join(in, rel), []byte(rel))
	}

	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	var cfg *exitclient.ConfigError
	require.ErrorAs(t, err, &cfg)
	msg := err.Error()
	require.Contains(t, msg, `"A.bin" and "a.bin"`)
	require.Contains(t, msg, fmt.Sprintf("%q and %q", nfd, nfc))
	require.Contains(t, msg, `"d" and "D/x"`)
	require.Contains(t, msg, `"STRASSE" and "straße"`)
	require.Contains(t, msg, "--exact-names")
	require.NotContains(t, msg, `"ok.bin"`)
	require.Zero(t, rep.Decrypted)
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing written, not even --out")

	// With ExactNames (a case-sensitive volume, as here), every file is decrypted to its own.
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{ExactNames: true})
	require.NoError(t, err)
	require.Equal(t, 9, rep.Decrypted)
	for _, rel := range []string{"A.bin", "a.bin", nfc, nfd} {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err)
		require.Equal(t, rel, string(got))
	}

	// The part-file suffix is matched folded too: x.IDVAULT-PART is x's part file on such a volume.
	in2 := t.TempDir()
	write(t, filepath.Join(in2, "x.IDVAULT-PART"), []byte("x"))
	_, err = tree.Decrypt(context.Background(), c, in2, t.TempDir(), tree.Options{})
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), `"x.IDVAULT-PART"`)
}
