package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idvault/idvault/app/apptest/external"
)

// EnvPGBin names the directory holding initdb and postgres; when set, no other place is
// searched. (A missing PostgreSQL skips the test, or fails it under IDVAULT_REQUIRE_EXTERNAL=1:
// external.Missing.)
const EnvPGBin = "IDVAULT_PG_BIN"

// dirPrefix names the cluster directories; the test process ID follows, so a later run can
// tell the directories of dead runs.
const dirPrefix = "idvault-pgtest-"

// cluster is the one server of this test binary.
type cluster struct {
	dir  string // temp directory: data/, the socket, server.log
	bin  string
	port int

	// Set by run, for Stop and Start (restart.go).
	cred   *syscall.Credential
	proc   *exec.Cmd
	exited chan error
}

var (
	startOnce sync.Once
	shared    *cluster
	startErr  error
	skipMsg   string
	dbCounter atomic.Int64
)

// NewDB returns the DSN (a postgres:// URL) of a new, empty database on the test cluster,
// starting the cluster on first use. The database is dropped when the test ends. Without
// PostgreSQL the test is skipped (failed when IDVAULT_REQUIRE_EXTERNAL=1).
func NewDB(tb testing.TB) string {
	tb.Helper()
	c := get(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbCounter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// Close whatever the test left open, then drop.
		_ = c.exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+name+"' AND pid <> pg_backend_pid()")
		if err := c.exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.dsn(name)
}

// Bin returns the path of a PostgreSQL client program (psql, pg_dump, ...) of the same
// installation as the test cluster, skipping like NewDB when PostgreSQL is absent.
func Bin(tb testing.TB, name string) string {
	tb.Helper()
	c := get(tb)
	p := filepath.Join(c.bin, name)
	if _, err := os.Stat(p); err != nil {
		if lp, lerr := exec.LookPath(name); lerr == nil {
			return lp
		}
		tb.Fatalf("pgtest: %s not found in %s nor $PATH", name, c.bin)
	}
	return p
}

func get(tb testing.TB) *cluster {
	tb.Helper()
	external.Short(tb, "PostgreSQL")
	startOnce.Do(func() { shared, skipMsg, startErr = start() })
	if skipMsg != "" {
		external.Missing(tb, "pgtest: "+skipMsg)
	}
	if startErr != nil {
		tb.Fatalf("pgtest: starting PostgreSQL: %v", startErr)
	}
	return shared
}

func (c *cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func (c *cluster) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.dsn("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// findBin returns the directory of initdb and postgres, or "".
func findBin() string {
	ok := func(d string) bool {
		for _, n := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(d, n)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	if d := os.Getenv(EnvPGBin); d != "" {
		if ok(d) {
			return d
		}
		return ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if ok(d) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && ok(filepath.Dir(p)) {
		return filepath.Dir(p)
	}
	return ""
}

func versionOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// start makes and starts the cluster. A non-empty skip means PostgreSQL is not available.
func start() (c *cluster, skip string, err error) {
	bin := findBin()
	if bin == "" {
		return nil, "PostgreSQL server binaries (initdb, postgres) not found in $" + EnvPGBin +
			", /usr/lib/postgresql/*/bin or $PATH; run `make deps` (.ci/install-postgres)", nil
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, "running as root and there is no `postgres` OS user to run initdb as " +
				"(install the postgresql package, or run the tests as another user)", nil
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	sweepStale()

	dir, err := os.MkdirTemp("", dirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, "", err
	}
	c = &cluster{dir: dir, bin: bin}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, "", err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("initdb: %v: %s", err, tail(out))
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if lastErr = c.run(cred); lastErr == nil {
			ok = true
			return c, "", nil
		}
	}
	return nil, "", lastErr
}

// run starts postgres on a free port and waits until it accepts connections.
func (c *cluster) run(cred *syscall.Credential) error {
	port, err := external.FreePort()
	if err != nil {
		return err
	}
	if c.proc != nil { // a restart (Start): the databases' DSNs name the old port
		port = c.port
	}
	c.port = port
	logPath := filepath.Join(c.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", c.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=100", "-c", "logging_collector=off")
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = serverAttr(cred)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c.cred, c.proc, c.exited = cred, cmd, exited
	c.watch(cmd.Process.Pid)

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited (%v): %s", err, tail(log))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.exec(ctx, "SELECT 1")
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Signal(syscall.SIGINT)
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres did not accept connections within 60s (%v): %s", err, tail(log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watch starts a detached process that, once this test process is gone, stops the server
// (fast shutdown, then SIGKILL after 10 s) and removes the cluster directory.
func (c *cluster) watch(pgPID int) {
	const script = `while kill -0 "$1" 2>/dev/null; do sleep 0.2; done
kill -INT "$2" 2>/dev/null
i=0
while kill -0 "$2" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL "$2" 2>/dev/null
rm -rf "$3"`
	w := exec.Command("/bin/sh", "-c", script, "pgtest-watch", strconv.Itoa(os.Getpid()), strconv.Itoa(pgPID), c.dir)
	w.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := w.Start(); err == nil {
		go func() { _ = w.Wait() }()
	}
}

// sweepStale removes cluster directories whose test process is gone (left by a machine crash
// or a killed watcher), stopping a server still running in one.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), dirPrefix)
		pidStr, _, found := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !found || err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pg, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && alive(pg) {
				continue // its watcher is still stopping it
			}
		}
		_ = os.RemoveAll(d)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
