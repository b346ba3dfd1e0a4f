package idserver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The CORS middleware runs on every request once cors_origins are set: finding a path's
// methods allocates nothing, whatever the path's case.
func TestCORSMethodsDoNotAllocate(t *testing.T) {
	for _, path := range []string{"/identity", "/Public_Identity/", "/IDENTITY", "/healthz"} {
		allocs := testing.AllocsPerRun(100, func() { _ = corsMethods(path) })
		require.Zero(t, allocs, path)
	}
}
