package external_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

// Without a limit every write is kept, from any number of goroutines; with one, writes past it
// are dropped and still reported as written (a child process must not fail on its output).
func TestOutputKeepsWritesUpToItsLimit(t *testing.T) {
	var all external.Output
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = all.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	require.Equal(t, strings.Repeat("0123456789", 800), all.String())

	capped := external.Output{Limit: 15}
	for range 3 {
		n, err := capped.Write([]byte("0123456789"))
		require.NoError(t, err)
		require.Equal(t, 10, n)
	}
	require.Equal(t, "01234567890123456789", capped.String(), "the write that crosses the limit is kept, later ones dropped")
}

// CacheDir: the variable when set, else the XDG cache directory, else ~/.cache.
func TestCacheDir(t *testing.T) {
	t.Setenv("IDVAULT_TEST_TOOL_DIR", "/opt/tool")
	require.Equal(t, "/opt/tool", external.CacheDir("IDVAULT_TEST_TOOL_DIR", "tool"))
	t.Setenv("IDVAULT_TEST_TOOL_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/var/cache/me")
	require.Equal(t, filepath.Join("/var/cache/me", "idvault", "tool"), external.CacheDir("IDVAULT_TEST_TOOL_DIR", "tool"))
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/me")
	require.Equal(t, filepath.Join("/home/me", ".cache", "idvault", "tool"), external.CacheDir("IDVAULT_TEST_TOOL_DIR", "tool"))
}
