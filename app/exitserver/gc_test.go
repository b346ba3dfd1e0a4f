package exitserver_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitserver"
)

// gcSettings reads GOGC and the soft memory limit without changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// unsetEnv unsets an environment variable for the test.
func unsetEnv(t *testing.T, name string) {
	t.Setenv(name, "") // put back after the test
	require.NoError(t, os.Unsetenv(name))
}

// TuneGC sets GOGC and the soft memory limit of an exit server, and puts back what was there.
func TestTuneGC(t *testing.T) {
	unsetEnv(t, "GOGC")
	unsetEnv(t, "GOMEMLIMIT")
	percent, limit := gcSettings()
	restore := exitserver.TuneGC(64 << 20)
	p, l := gcSettings()
	require.Equal(t, exitserver.GCPercent, p)
	require.Equal(t, int64(64<<20+exitserver.MemoryLimitHeadroom), l)
	restore()
	p, l = gcSettings()
	require.Equal(t, percent, p)
	require.Equal(t, limit, l)
}

// An operator's GOGC and GOMEMLIMIT stay as they are.
func TestTuneGCKeepsTheOperatorsSettings(t *testing.T) {
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	percent, limit := gcSettings()
	restore := exitserver.TuneGC(64 << 20)
	defer restore()
	p, l := gcSettings()
	require.Equal(t, percent, p)
	require.Equal(t, limit, l)
}
