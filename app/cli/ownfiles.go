package cli

import (
	"os"

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
