package e2e_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// progressRows is the rows the run on to has committed: -1 before its progress table exists.
func (w *tableWorld) progressRows(t *testing.T, to string) int {
	t.Helper()
	if tableSQL(t, w.dst, `SELECT to_regclass('`+to+`_progress') IS NOT NULL`) != "true" {
		return -1
	}
	n, err := strconv.Atoi(tableSQL(t, w.dst, `SELECT coalesce(sum(rows_done), 0)::int FROM `+to+`_progress`))
	require.NoError(t, err)
	return n
}

// tableRun is a run of the binary that the test kills or waits for.
type tableRun struct {
	cmd    *exec.Cmd
	errOut *bytes.Buffer
	exited chan struct{}
	err    error
}

// startTable starts the binary with args.
func startTable(t *testing.T, dir string, args []string) *tableRun {
	t.Helper()
	r := &tableRun{cmd: exec.Command(apptest.Binary(t), args...), errOut: &bytes.Buffer{}, exited: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), tableEnv...)
	r.cmd.Dir = dir
	r.cmd.Stderr = r.errOut
	require.NoError(t, r.cmd.Start())
	go func() { r.err = r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.exited
	})
	return r
}

// wait waits for the run's end and returns its exit code.
func (r *tableRun) wait(t *testing.T) int {
	t.Helper()
	<-r.exited
	return apptest.ExitCode(t, r.err)
}

// waitRows waits until the run on to has committed more than atLeast rows (-1: until its
// progress table exists), or the process has ended; it reports whether it is still running.
func (w *tableWorld) waitRows(t *testing.T, r *tableRun, to string, atLeast int) bool {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if w.progressRows(t, to) > atLeast {
			return true
		}
		select {
		case <-r.exited:
			return false
		case <-time.After(3 * time.Millisecond):
		}
	}
	t.Fatalf("the run made no progress in 2 minutes: %s", r.errOut)
	return false
}

// SIGKILL of the client at several points (as soon as its tables exist, after its first
// batches, midway, late), and a Ctrl-C (exit 130), each followed by the next run of the same
// command: the last run, left to finish, leaves exactly the rows of an uninterrupted run.
func TestExitDecryptTableKilledAndResumed(t *testing.T) {
	t.Parallel()
	w := newTableWorld(t, 1, 6)
	args := w.args("--to-table", "clear_msgs", "--workers", "2", "--batch-rows", "3")
	total := len(w.rows)
	killed := 0
	for _, at := range []int{-1, 0, total / 3, total / 2, 2 * total / 3} {
		at = max(at, w.progressRows(t, "clear_msgs")) // rows this run commits
		run := startTable(t, w.dir, args)
		running := w.waitRows(t, run, "clear_msgs", at)
		sig := syscall.SIGKILL
		if killed == 2 {
			sig = syscall.SIGINT
		}
		if running {
			if err := run.cmd.Process.Signal(sig); errors.Is(err, os.ErrProcessDone) {
				running = false // it ended between the look at its progress and the signal
			} else {
				require.NoError(t, err)
			}
		}
		code := run.wait(t)
		if !running {
			require.Equal(t, 1, code, "a run not stopped ends with the negative cases failed: %s", run.errOut)
			continue
		}
		if sig == syscall.SIGKILL && code != -1 {
			continue // the signal came after the run's end
		}
		killed++
		if sig == syscall.SIGINT {
			require.Equal(t, 130, code, "Ctrl-C: %s", run.errOut)
			require.Contains(t, run.errOut.String(), "interrupted")
		}
	}
	require.GreaterOrEqual(t, killed, 3, "the runs were stopped midway")
	done := w.progressRows(t, "clear_msgs")
	_, errOut, code := apptest.RunCLI(t, w.dir, tableEnv, args...)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "("+strconv.Itoa(total-done)+" this run)")
	w.check(t, "clear_msgs")
}

// Two exit servers, one killed (SIGKILL) midway: its batches go to the other, and the run
// completes with every row.
func TestExitDecryptTableServerKilled(t *testing.T) {
	t.Parallel()
	w := newTableWorld(t, 2, 6)
	args := w.args("--to-table", "clear_msgs", "--batch-rows", "3")
	run := startTable(t, w.dir, args)
	require.True(t, w.waitRows(t, run, "clear_msgs", len(w.rows)/4), "the run still going: %s", run.errOut)
	w.servers[0].Kill9(t)
	require.Equal(t, 1, run.wait(t), "the negative cases fail, the run completes: %s", run.errOut)
	require.Contains(t, run.errOut.String(), strconv.Itoa(len(w.rows))+" rows in clear_msgs")
	w.check(t, "clear_msgs")
}
