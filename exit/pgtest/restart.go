package pgtest

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	restartMu sync.Mutex
	stopped   bool
)

// Stop shuts the test cluster down (fast shutdown) and waits until it is gone: every database
// of this test binary is unreachable until Start. For tests of what happens when PostgreSQL
// goes away; such a test must not run in parallel with other database tests of its package.
func Stop(tb testing.TB) {
	tb.Helper()
	stop(tb, syscall.SIGINT)
}

// Crash stops the test cluster as a crash would, as far as PostgreSQL can tell: an immediate
// shutdown, which writes nothing more, so that commits still in the write-ahead log's buffers
// (synchronous_commit = off) are lost; Start recovers the rest. The same rules as Stop.
func Crash(tb testing.TB) {
	tb.Helper()
	stop(tb, syscall.SIGQUIT)
}

func stop(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	c := get(tb)
	restartMu.Lock()
	defer restartMu.Unlock()
	if stopped {
		return
	}
	_ = c.proc.Process.Signal(sig)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.proc.Process.Kill()
		<-c.exited
	}
	stopped = true
}

// Start starts the cluster again after Stop, on the same port (so DSNs stay valid), and waits
// until it accepts connections. It does nothing when the cluster was not stopped.
func Start(tb testing.TB) {
	tb.Helper()
	c := get(tb)
	restartMu.Lock()
	defer restartMu.Unlock()
	if !stopped {
		return
	}
	if err := c.run(c.cred); err != nil {
		tb.Fatalf("pgtest: restarting PostgreSQL: %v", err)
	}
	stopped = false
}
