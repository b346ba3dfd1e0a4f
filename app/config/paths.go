package config

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/knadh/koanf/v2"
)

// Files that live beside the data file unless configured: store.key_file defaults to
// master.key and admin.token_file to admin.token in the directory of store.path, so moving
// the data file (--data, IDVAULT_STORE__PATH) moves them with it. A path set explicitly in
// any layer is kept as given (a relative one is relative to the working directory).
const (
	defaultKeyFileName   = "master.key"
	defaultTokenFileName = "admin.token"
)

// derivePaths fills store.key_file and admin.token_file when no layer set them, in the typed
// config and in the merged view (so config check prints the path used).
func derivePaths(k *koanf.Koanf, c *Config) {
	dir := filepath.Dir(c.Store.Path)
	if c.Store.KeyFile == "" {
		c.Store.KeyFile = filepath.Join(dir, defaultKeyFileName)
		_ = k.Set("store.key_file", c.Store.KeyFile)
	}
	if c.Admin.TokenFile == "" {
		c.Admin.TokenFile = filepath.Join(dir, defaultTokenFileName)
		_ = k.Set("admin.token_file", c.Admin.TokenFile)
	}
}

// checkPaths refuses one file in two roles: the data file, the master key and the admin token
// file (when admin.token does not replace it) must be three files. A token file that is the key
// file would make the master key the admin token, handed to every admin client.
func (c Config) checkPaths() []error {
	type role struct{ key, path string }
	roles := []role{{"store.path", c.Store.Path}, {"store.key_file", c.Store.KeyFile}}
	if c.Admin.Token == "" {
		roles = append(roles, role{"admin.token_file", c.Admin.TokenFile})
	}
	var errs []error
	for i, a := range roles {
		for _, b := range roles[:i] {
			if a.path != "" && b.path != "" && sameFile(a.path, b.path) {
				errs = append(errs, fmt.Errorf("%s: %s is also %s: each needs its own file", a.key, a.path, b.key))
			}
		}
	}
	return errs
}

// sameFile reports whether a and b name one file: the same file when both exist (links
// followed), else the same absolute path.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
