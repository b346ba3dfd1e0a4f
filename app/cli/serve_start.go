package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// Start-up never guesses: serve binds its listen addresses and checks the directories of its
// files before it creates anything (a data file, a master key, an admin token), so a start that
// cannot go on leaves nothing behind that a later start would take for the real thing.

// listenTCP binds addr. An address in use is said in one line naming it, the setting that gave
// it (what) and what to do (fix): nothing else is wrong, and nothing was created.
func listenTCP(addr, what, fix string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s: the address is in use (another idvault, or another program, listens there): stop it, or %s", what, addr, fix)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, addr, err)
	}
	return ln, nil
}

// checkDirectories refuses a data file, master key or admin token file whose directory does not
// exist, naming the directory and the command that creates it (store.CheckDirectory): a
// mistyped --data must not start an empty server with a new key. The one directory created is
// that of the built-in store.path, ./data (the local-dev quick start: "make run" in a fresh
// checkout).
func checkDirectories(c config.Config) error {
	if filepath.Clean(c.Store.Path) == filepath.Clean(config.Default().Store.Path) {
		if err := os.MkdirAll(filepath.Dir(c.Store.Path), 0o700); err != nil {
			return fmt.Errorf("create the data directory: %w", err)
		}
	}
	if err := store.CheckDirectory(c.Store.Path, "data file", "store.path or --data"); err != nil {
		return err
	}
	if err := store.CheckDirectory(c.Store.KeyFile, "master key", "store.key_file"); err != nil {
		return err
	}
	if c.Admin.Token == "" {
		return store.CheckDirectory(adminTokenFile(c), "admin token file", "admin.token_file")
	}
	return nil
}
