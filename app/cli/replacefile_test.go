package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The address file and `app create --out F --force` replace a file whole: the new content at
// mode 0600 (whatever the old file's mode), no temporary file left beside it, and a failure
// names the file the user knows, never a temporary name.
func TestWriteReplace(t *testing.T) {
	t.Parallel()
	writers := map[string]func(path string, data []byte) error{
		"address file": func(path string, data []byte) error {
			return writeAddrFile(path[:len(path)-len(".addr")], string(data[:len(data)-1]))
		},
		"private file with force": func(path string, data []byte) error { return writePrivateFile(path, data, true) },
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "idvault.db.addr")
			require.NoError(t, write(path, []byte("127.0.0.1:1\n")), "a new file")
			require.NoError(t, os.WriteFile(path, []byte("old content, longer than the new one\n"), 0o644))
			require.NoError(t, os.Chmod(path, 0o644))
			require.NoError(t, write(path, []byte("127.0.0.1:2\n")))

			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "127.0.0.1:2\n", string(raw))
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "a temporary file was left behind")

			missing := filepath.Join(dir, "gone", "idvault.db.addr")
			err = write(missing, []byte("127.0.0.1:3\n"))
			require.Error(t, err)
			require.Contains(t, err.Error(), "write "+missing+": ")
			require.NotContains(t, err.Error(), ".idvault-", "the error names a temporary file")
		})
	}
}
