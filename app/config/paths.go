package config

import (
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
