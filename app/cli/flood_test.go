package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
)

// floodChildEnv names the server a re-run of this test binary starts (TestFloodChild), and
// floodDirEnv its data directory: the parent test's, removed by the parent even when the child
// is killed (a child's own TempDir would then be left behind).
const (
	floodChildEnv = "IDVAULT_TEST_FLOOD_CHILD"
	floodDirEnv   = "IDVAULT_TEST_FLOOD_DIR"
)

// floodFileLimit is the open-file limit the child lowers itself to once it listens: far fewer
// files than the connections of the flood, and fewer than its connection cap (which was fitted
// under the higher limit it started with), so accepts fail with EMFILE.
const floodFileLimit = 48

// TestFloodChild is not a test: run by TestServersSurviveAConnectionFlood in a process of its
// own, it starts `idvault serve` or `idvault exit` (in-process, a fake exit database) under a
// low open-file limit, prints its address, and serves until SIGTERM.
func TestFloodChild(t *testing.T) {
	which := os.Getenv(floodChildEnv)
	if which == "" {
		t.Skip("run by TestServersSurviveAConnectionFlood")
	}
	// At start: 256 files, so the process fits its connection cap under it (and says so).
	lim := syscall.Rlimit{Cur: 256, Max: 256}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	dir := os.Getenv(floodDirEnv)
	require.NotEmpty(t, dir, floodDirEnv)
	e := clitest.Env(dir)
	e.Embedded = clitest.Embedded(t)
	e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false")
	for _, kv := range os.Environ() { // the parent's exit settings, if any
		if strings.HasPrefix(kv, "IDVAULT_EXIT__") {
			e.Environ = append(e.Environ, kv)
		}
	}
	db := exitfake.New()
	who := db.AddImportedUser()
	db.Publish(who, attackSessionID, attackKey)
	e.OpenExitDB = func(context.Context, config.Exit) (exitserver.DB, func(), error) {
		return db, func() {}, nil
	}
	e.Ready = func(addr string) {
		if which == "exit-memory" {
			fmt.Printf("ADDR %s\n", addr)
			return
		}
		low := syscall.Rlimit{Cur: floodFileLimit, Max: floodFileLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			panic(err)
		}
		fmt.Printf("ADDR %s\n", addr)
	}
	args := []string{"serve"}
	if strings.HasPrefix(which, "exit") {
		args = []string{"exit", "--db", "postgres://fake", "--app-id", testAppID, "--listen", "127.0.0.1:0"}
	}
	code := cli.Run(ctx, args, os.Stdout, os.Stderr, e)
	fmt.Printf("EXIT %d\n", code)
}

// A flood of idle connections, many more than the process's open-file limit, neither ends the
// server nor keeps it from answering once the flood is gone (issue 19: it used to exit on the
// first EMFILE). The servers run in a child process whose file limit is lowered.
func TestServersSurviveAConnectionFlood(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"serve", "exit"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			child := startFloodChild(t, which, os.Environ())
			addr, stderr := child.addr, child.stderr

			var flood []net.Conn
			for range 300 { // bounded: 300 idle connections against 48 files
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					continue
				}
				flood = append(flood, c)
			}
			time.Sleep(300 * time.Millisecond) // let the server run into the limit
			for _, c := range flood {
				c.Close()
			}
			client := &http.Client{Timeout: 20 * time.Second}
			resp, err := client.Get("http://" + addr + "/healthz")
			require.NoError(t, err, "the server answers after the flood; stderr:\n%s", stderr.String())
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			require.GreaterOrEqual(t, len(flood), 100, "the flood reached the server")
			require.NoError(t, syscall.Kill(child.cmd.Process.Pid, 0), "the server is still running")

			require.NoError(t, child.cmd.Process.Signal(syscall.SIGTERM))
			rest := ""
			for child.lines.Scan() {
				rest += child.lines.Text() + "\n"
			}
			require.NoError(t, child.cmd.Wait())
			require.Contains(t, rest, "EXIT 0", "a clean shutdown; stderr:\n%s", stderr.String())
			require.Contains(t, stderr.String(), "accepting a connection failed; retrying", "the flood hit the file limit")
			require.Contains(t, stderr.String(), "connection cap lowered to fit under the open-file limit")
		})
	}
}

// floodChild is a running TestFloodChild: a server in a process of its own.
type floodChild struct {
	cmd    *exec.Cmd
	lines  *bufio.Scanner // its standard output, past the ADDR line
	addr   string         // where it listens
	stderr *apptest.LogBuffer
}

// startFloodChild re-runs this test binary as TestFloodChild serving which ("serve", "exit",
// "exit-memory") with environ, and waits for the address it prints. The child is killed when
// the test ends if still running.
func startFloodChild(t *testing.T, which string, environ []string) *floodChild {
	t.Helper()
	c := &floodChild{cmd: exec.Command(os.Args[0], "-test.run=^TestFloodChild$", "-test.count=1"), stderr: &apptest.LogBuffer{}}
	c.cmd.Env = append(environ, floodChildEnv+"="+which, floodDirEnv+"="+t.TempDir())
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.cmd.Stderr = c.stderr
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	c.lines = bufio.NewScanner(stdout)
	for c.addr == "" && c.lines.Scan() {
		c.addr, _ = strings.CutPrefix(c.lines.Text(), "ADDR ")
	}
	require.NotEmpty(t, c.addr, "the child did not listen; stderr:\n%s", c.stderr.String())
	return c
}
