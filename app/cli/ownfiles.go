package cli

import (
	"os"
	"path/filepath"

	"github.com/idvault/idvault/app/config"
)

// ownFiles are the files idvault runs on: the data file, its master key, its admin token, its
// address file and the --config file. An output flag's --force never replaces them: a backup
// or an app's secrets written over one would take the place of the live data file under its
// server (whose later writes then go to an unlinked file), of the only master key, or of the
// configuration.
func ownFiles(cf configFlags, c config.Config) []string {
	own := []string{c.Store.Path, c.Store.KeyFile, c.Admin.TokenFile, addrFilePath(c.Store.Path)}
	if cf.file != "" {
		own = append(own, cf.file)
	}
	return own
}

// isOwnFile reports whether st is one of the files named in own (compared as files, so a
// symbolic link or another path to the same file counts).
func isOwnFile(st os.FileInfo, own []string) bool {
	for _, p := range own {
		if o, err := os.Stat(p); err == nil && os.SameFile(st, o) {
			return true
		}
	}
	return false
}

// isOwnPath reports whether path, a file that does not exist, is where one of the files named
// in own would be: the address file exists only while a server runs, so an output written to
// its path with none running would be overwritten by the next serve. Both sides are compared
// with their directory's symbolic links resolved.
func isOwnPath(path string, own []string) bool {
	where := resolvedPath(path)
	for _, p := range own {
		if resolvedPath(p) == where {
			return true
		}
	}
	return false
}

// resolvedPath is path made absolute, with the symbolic links of its directory resolved.
func resolvedPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base)
}
