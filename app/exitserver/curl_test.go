package exitserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/encryption"
)

// curl, which sends "Expect: 100-continue" for bodies over 1 MiB, decrypts a stream, and
// exits non-zero when a stream fails after its first chunk.
func TestCurlStreams(t *testing.T) {
	t.Parallel()
	apptest.Command(t, "curl", "curl")
	f := newFixture(t, exitserver.Config{})
	who, _ := f.db.AddUser()
	status, _, _ := f.do(t, "PUT", "/v1/identities", "", importBody(who))
	require.Equal(t, 201, status)
	clear := randomBytes(3 << 20)
	enc, err := f.db.Encrypt(who, encryption.V11, clear, encryption.EncryptOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	require.NoError(t, os.WriteFile(in, enc, 0o600))
	out := filepath.Join(dir, "out")
	cmd := exec.Command("curl", "-sS", "-f", "-o", out, "--data-binary", "@"+in, f.url+"/v1/decrypt")
	o, err := cmd.CombinedOutput()
	require.NoError(t, err, string(o))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(clear, got))
	bad := bytes.Clone(enc)
	bad[len(bad)-5000] ^= 1
	require.NoError(t, os.WriteFile(in, bad, 0o600))
	o, err = exec.Command("curl", "-sS", "-o", out, "--data-binary", "@"+in, f.url+"/v1/decrypt").CombinedOutput()
	require.Error(t, err, "curl must fail on a cut stream: %s", o)
}
