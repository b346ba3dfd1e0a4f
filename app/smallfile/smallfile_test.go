package smallfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A small file is read whole; one over the limit, or an endless device, is refused at once and
// named; a pipe is read as a file.
func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := filepath.Join(dir, "at-limit")
	require.NoError(t, os.WriteFile(at, []byte(strings.Repeat("k", 64)), 0o600))
	raw, err := Read(at, 64)
	require.NoError(t, err)
	require.Len(t, raw, 64)

	_, err = Read(at, 63)
	require.ErrorIs(t, err, ErrTooLarge)
	require.Contains(t, err.Error(), at)
	require.Contains(t, err.Error(), "over 63 bytes")

	_, err = Read("/dev/zero", 1<<20)
	require.ErrorIs(t, err, ErrTooLarge)

	_, err = Read(filepath.Join(dir, "missing"), 64)
	require.True(t, errors.Is(err, os.ErrNotExist))

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	go func() { _, _ = w.WriteString("from a pipe"); w.Close() }()
	raw, err = Read(fmt.Sprintf("/dev/fd/%d", r.Fd()), 64)
	require.NoError(t, err)
	require.Equal(t, "from a pipe", string(raw))
}
