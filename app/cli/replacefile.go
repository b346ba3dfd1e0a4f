package cli

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeReplace writes data to path atomically, whether or not path exists: a temporary file
// in the same directory (so the rename cannot cross file systems), written, set to mode,
// fsynced, closed, then renamed over path. A reader sees the old content or the new, never a
// part; a failure leaves the old file as it was and no temporary file behind. The directory
// is not fsynced: after a power loss path may hold the old content, whole (neither caller,
// the address file and `app create --out --force`, needs more). Errors name path, never the
// temporary file.
func writeReplace(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".idvault-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}
