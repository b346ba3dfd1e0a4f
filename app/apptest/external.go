package apptest

import (
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// EnvRequireExternal is external.EnvRequire: set to 1 (as `make test` does, after `make deps`),
// it turns a missing external tool (node and its npm packages, Chromium, age, systemd-analyze,
// fish) into a test failure instead of a skip.
const EnvRequireExternal = external.EnvRequire

// MissingExternal is external.Missing: it skips the test, or fails it under
// IDVAULT_REQUIRE_EXTERNAL=1. msg names the tool and how to install it.
func MissingExternal(tb testing.TB, msg string) {
	tb.Helper()
	external.Missing(tb, msg)
}

// CacheDir is external.CacheDir: where `make deps` installs a tool the tests run.
func CacheDir(env, name string) string { return external.CacheDir(env, name) }

// NodeModules is external.NodeModules: the path of node, when each of modules is installed
// under dir/node_modules (MissingExternal otherwise).
func NodeModules(tb testing.TB, dir, install string, modules ...string) string {
	tb.Helper()
	return external.NodeModules(tb, dir, install, modules...)
}
