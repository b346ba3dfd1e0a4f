//go:build unix

package cli

import (
	"io/fs"
	"syscall"
)

// ownerOf is the user ID that owns a file.
func ownerOf(st fs.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}
