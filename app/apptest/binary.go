package apptest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary builds the real idvault binary once per test process, with `make build` (so it is
// stamped with the version, commit and build date like a user's), and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	external.Short(t, "the idvault binary")
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = err
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		dir, err := os.MkdirTemp("", "idvault-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "idvault")
		cmd := exec.Command("make", "-s", "build", "BIN="+buildPath)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("make build: %v: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return buildPath
}

// FreePort returns a free loopback TCP port (external.FreePort: below the ephemeral range, so
// that no port-0 listener or outgoing connection of a parallel test takes it meanwhile). It is
// free when FreePort returns, not reserved: a test that needs a port nothing answers on uses
// DeadPort.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := external.FreePort()
	require.NoError(t, err)
	return port
}

// DeadPort returns a loopback TCP port where connections are refused, as by a server that is
// down, and that no other socket can take until release is called (or the test ends): a socket
// is bound to it and never listens. A free port (FreePort) could meanwhile be taken by a server
// of a test running in parallel, which would then answer. A test that starts a server on the
// port later calls release just before.
func DeadPort(t testing.TB) (port int, release func()) {
	t.Helper()
	// Close-on-exec under ForkLock, as package net does where SOCK_CLOEXEC is missing (darwin):
	// a server process started meanwhile by a parallel test does not inherit the socket.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	require.NoError(t, err)
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return sa.(*syscall.SockaddrInet4).Port, release
}

// Proc is a running idvault server process.
type Proc struct {
	Cmd    *exec.Cmd
	URL    string
	Dir    string
	Env    []string
	Stdout *LogBuffer
	Stderr *LogBuffer
}

// DataEnv is the environment that puts a server's data in dir, listening on a loopback port the
// system picks when it starts (Start finds it in the address file): a port chosen beforehand
// could be taken meanwhile by a parallel test's server.
func DataEnv(t testing.TB, dir string) []string {
	return []string{
		"IDVAULT_STORE__PATH=" + filepath.Join(dir, "idvault.db"),
		"IDVAULT_STORE__KEY_FILE=" + filepath.Join(dir, "master.key"),
		"IDVAULT_SERVER__LISTEN=127.0.0.1:0",
		"IDVAULT_VERIFICATION__ENABLED=false",
	}
}

// Start runs `idvault serve` with env (see DataEnv) and waits until /healthz answers. On port 0
// its address is the one the server writes to its address file (IDVAULT_STORE__PATH plus
// ".addr") once it listens, read again until the server at it answers: a file left by an earlier
// server in dir is replaced. Every answer the test process then gets from it is checked against
// the OpenAPI document (openapi_transport.go). The process is killed when the test ends if
// still running.
func Start(t testing.TB, dir string, env []string, args ...string) *Proc {
	t.Helper()
	listen, data := "", ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "IDVAULT_SERVER__LISTEN="); ok {
			listen = v
		}
		if v, ok := strings.CutPrefix(kv, "IDVAULT_STORE__PATH="); ok {
			data = v
		}
	}
	require.NotEmpty(t, listen, "env must set IDVAULT_SERVER__LISTEN")
	args = append([]string{"serve"}, args...)
	if !strings.HasSuffix(listen, ":0") {
		CheckHost(listen)
		return StartBinary(t, dir, env, "http://"+listen, args...)
	}
	require.NotEmpty(t, data, "a server on port 0 needs IDVAULT_STORE__PATH (its address file)")
	return startAt(t, dir, env, func() string { return AddrURL(data) }, args...)
}

// AddrURL is the URL of the server whose data file is at dataPath, from the address file it
// writes once it listens (dataPath plus ".addr"); "" while there is none. As for the servers
// Start starts, this process's requests to it are checked against openapi.json (CheckHost).
func AddrURL(dataPath string) string {
	raw, err := os.ReadFile(dataPath + ".addr")
	if err != nil {
		return ""
	}
	addr := strings.TrimSpace(string(raw))
	CheckHost(addr)
	return "http://" + addr
}

// StartBinary runs the idvault binary with args, env (added to this process's) and dir, and
// waits until url's /healthz answers 200: a server (`serve`, `exit`) listening at url. The
// process is killed when the test ends if still running.
func StartBinary(t testing.TB, dir string, env []string, url string, args ...string) *Proc {
	t.Helper()
	return startAt(t, dir, env, func() string { return url }, args...)
}

// startAt is StartBinary with the server's URL asked of url until it answers ("" while unknown).
func startAt(t testing.TB, dir string, env []string, url func() string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Dir: dir, Env: env, Stdout: &LogBuffer{}, Stderr: &LogBuffer{}}
	p.Cmd = exec.Command(Binary(t), args...)
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Dir = dir
	p.Cmd.Stdout, p.Cmd.Stderr = p.Stdout, p.Stderr
	require.NoError(t, p.Cmd.Start())
	t.Cleanup(func() {
		if p.Cmd.ProcessState == nil {
			_ = p.Cmd.Process.Kill()
			_ = p.Cmd.Wait()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.URL = url(); p.URL != "" {
			resp, err := http.Get(p.URL + "/healthz")
			if err != nil && strings.Contains(err.Error(), "openapi.json:") {
				t.Fatal(err)
			}
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return p
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("idvault %s did not answer %s/healthz; stderr:\n%s", args[0], p.URL, p.Stderr.String())
	return nil
}

// InitData runs `idvault serve` once with env and stops it: only serve creates a data file
// (with its master key and admin token), and the other commands refuse to run without one.
func InitData(t testing.TB, dir string, env []string) {
	t.Helper()
	Start(t, dir, env).Stop(t)
}

// Kill9 kills the server with SIGKILL (a crash) and waits for it.
func (p *Proc) Kill9(t testing.TB) {
	t.Helper()
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGKILL))
	_ = p.Cmd.Wait()
}

// Stop sends SIGTERM and waits (20 s at most) for a clean exit.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "a clean exit on SIGTERM; stderr:\n%s", p.Stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("idvault did not stop within 20 s of SIGTERM; stderr:\n%s", p.Stderr.String())
	}
}

// AdminToken reads the admin token the server generated beside its data file.
func (p *Proc) AdminToken(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(p.Dir, "admin.token"))
	require.NoError(t, err)
	return strings.TrimSpace(string(raw))
}

// RunCLI runs the idvault binary with args and env and returns stdout, stderr and exit code.
func RunCLI(t testing.TB, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := ExitCode(t, cmd.Run())
	return out.String(), errb.String(), code
}

// ExitCode is the exit code of a command that ran (0 when err is nil); any other failure to
// run it fails t.
func ExitCode(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}
