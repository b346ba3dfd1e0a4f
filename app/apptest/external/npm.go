package external

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CacheDir is where `make deps` installs a tool the tests run: $env when set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/idvault/name (the Makefile's default).
func CacheDir(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "idvault", name)
}

// NodeModules returns the path of node, when it is on $PATH and each of modules is installed
// under dir/node_modules; otherwise it calls Missing, with install as the way to install them.
func NodeModules(tb testing.TB, dir, install string, modules ...string) string {
	tb.Helper()
	Short(tb, fmt.Sprintf("node with %v", modules))
	node, err := exec.LookPath("node")
	for _, m := range modules {
		if err != nil {
			break
		}
		_, err = os.Stat(filepath.Join(dir, "node_modules", m, "package.json"))
	}
	if err != nil {
		Missing(tb, fmt.Sprintf("node with %v in %s is needed: %v; run `make deps` (%s)", modules, dir, err, install))
	}
	return node
}
