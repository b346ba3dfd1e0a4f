package outfiles

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Which disk errors stop a run (every later file would meet them too) and which fail one file.
func TestOutputErrStops(t *testing.T) {
	tree, err := OpenTree(t.TempDir())
	require.NoError(t, err)
	defer tree.Close()
	for errno, stops := range map[syscall.Errno]bool{
		syscall.ENOSPC: true, syscall.EDQUOT: true, syscall.EROFS: true, syscall.EACCES: true,
		syscall.EPERM: true, syscall.EIO: true,
		syscall.ENAMETOOLONG: false, syscall.EFBIG: false,
	} {
		err := tree.outputErr("f.bin", &fs.PathError{Op: "write", Path: "f.bin", Err: errno})
		var oe *OutputError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, stops, oe.StopsRun(), "%v", errno)
		require.Equal(t, fmt.Sprintf("write %q: %v", tree.path+"/f.bin", errno), err.Error())
	}
}
