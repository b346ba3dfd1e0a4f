package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// An error whose text opens with the command's own name is printed once, not twice.
func TestFailureSaysTheOperationOnce(t *testing.T) {
	t.Parallel()
	base := &fs.PathError{Op: "lstat", Path: "/in", Err: fs.ErrNotExist}
	for _, tc := range []struct {
		path string
		err  error
		want string
	}{
		{"exit decrypt", fmt.Errorf("decrypt: list /in: %w", base), "idvault exit decrypt: list /in: lstat /in: file does not exist"},
		{"exit load-dump", fmt.Errorf("load dump: open /d: %w", fs.ErrNotExist), "idvault exit load-dump: open /d: file does not exist"},
		{"exit load-dump", fmt.Errorf("load-dump: x"), "idvault exit load-dump: x"},
		{"exit import", errors.New("open f: denied"), "idvault exit import: open f: denied"},
		{"", errors.New("decrypt: x"), "idvault: decrypt: x"},
	} {
		require.Equal(t, tc.want, failure(tc.path, tc.err))
	}
}

// The real command: a missing input directory is said with "decrypt" once, and is a usage
// error (found before the server is asked anything).
func TestExitDecryptMissingInputSaysDecryptOnce(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "missing")
	_, errOut, code := runHere(t, "exit", "decrypt", "--url", "http://127.0.0.1:1", "--in", in, "--out", filepath.Join(t.TempDir(), "out"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "idvault exit decrypt: --in "+strconv.Quote(in)+": no such file or directory")
	require.NotContains(t, errOut, "decrypt: decrypt:")
}
