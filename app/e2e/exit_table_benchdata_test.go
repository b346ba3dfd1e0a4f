package e2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/pgtest"
)

// tableBenchDump is a small generated dump (its keys file written), made once and kept in the
// temp directory for later runs: generation is deterministic.
func tableBenchDump(b *testing.B) string {
	b.Helper()
	opts := gen.Options{Users: 8, Groups: 2, Resources: 40, Seed: 3, WriteKeys: true}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("idvault-bench-dump-u%d-r%d-s%d", opts.Users, opts.Resources, opts.Seed))
	if _, err := os.Stat(filepath.Join(dir, dump.ManifestFile)); err == nil {
		return dir
	}
	tmp := fmt.Sprintf("%s.tmp%d", dir, os.Getpid())
	_ = os.RemoveAll(tmp)
	if _, err := gen.Generate(context.Background(), tmp, opts); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(filepath.Join(dir, dump.ManifestFile)); serr != nil {
			b.Fatal(err)
		}
	}
	_ = os.RemoveAll(tmp)
	return dir
}

// benchCiphertexts makes benchDistinct ciphertexts (formats 9 and 10 alternating) of 100 to
// 1,000 random letters, and returns them with their clear sizes.
func benchCiphertexts(b *testing.B, sessions map[encryption.SimpleID][]byte) ([][]byte, []int64) {
	b.Helper()
	var ids []encryption.SimpleID
	for id := range sessions {
		ids = append(ids, id)
	}
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	cts := make([][]byte, benchDistinct)
	sizes := make([]int64, benchDistinct)
	for i := range cts {
		clear := make([]byte, 100+rng.IntN(901))
		for j := range clear {
			clear[j] = 'a' + byte(rng.IntN(26))
		}
		id := ids[i%len(ids)]
		ct, _, err := encryption.Encrypt(encryption.V9+encryption.Version(i%2), sessions[id], clear, encryption.EncryptOptions{SessionID: &id})
		if err != nil {
			b.Fatal(err)
		}
		cts[i], sizes[i] = ct, int64(len(clear))
	}
	return cts, sizes
}

// benchSourceTable fills src (id bigint primary key, a text, b text, n int, note text) with
// rows rows: a the base64 of cts[i % benchDistinct], b of cts[(i*7+3) % benchDistinct] in three
// rows of five (NULL otherwise). It returns the number of fields that hold a ciphertext.
func benchSourceTable(b *testing.B, dsn string, cts [][]byte, rows int) int {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{`CREATE TABLE cts (k int PRIMARY KEY, v text NOT NULL)`,
		`CREATE TABLE src (id bigint PRIMARY KEY, a text, b text, n int, note text)`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"cts"}, []string{"k", "v"}, pgx.CopyFromSlice(len(cts), func(i int) ([]any, error) {
		return []any{i, base64.StdEncoding.EncodeToString(cts[i])}, nil
	})); err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, `INSERT INTO src SELECT i, a.v, CASE WHEN i % 5 < 3 THEN c.v END, i % 1000, 'row ' || i
		FROM generate_series(0, $1::int - 1) i JOIN cts a ON a.k = i % $2 JOIN cts c ON c.k = (i::bigint * 7 + 3) % $2`, rows, benchDistinct)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DROP TABLE cts`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE src`); err != nil {
		b.Fatal(err)
	}
	return rows + (rows/5)*3 + min(rows%5, 3)
}

// benchSQL runs one statement and returns its first column of its first row as text ("" for
// none).
func benchSQL(b *testing.B, dsn, sql string) string {
	b.Helper()
	if rows := pgtest.Query(b, dsn, sql); len(rows) > 0 && len(rows[0]) > 0 {
		return fmt.Sprint(rows[0][0])
	}
	return ""
}

// benchRun runs the binary with args to its end (exit 0), its standard output to stdout (none
// when nil), and returns its wall time and peak RSS in MiB (apptest.RunPeak).
func benchRun(b *testing.B, env []string, stdout io.Writer, args ...string) (float64, float64) {
	secs, rss, _ := benchRunCPU(b, env, stdout, args...)
	return secs, rss
}

// benchRunCPU is benchRun that also returns the CPU seconds the process used.
func benchRunCPU(b *testing.B, env []string, stdout io.Writer, args ...string) (float64, float64, float64) {
	b.Helper()
	cmd := exec.Command(apptest.Binary(b), args...)
	cmd.Env, cmd.Stdout = env, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	secs, peak, err := apptest.RunPeak(cmd)
	if err != nil {
		b.Fatalf("%v: %v: %s", args[:2], err, stderr.String())
	}
	return secs, peak / 1024, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// cpuSeconds is the CPU time a running process has used (user and system, /proc/PID/stat).
func cpuSeconds(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// pgCluster is the PostgreSQL cluster of the benchmark, by its postmaster.
type pgCluster struct{ pid int }

func newPGCluster(b *testing.B, dsn string) pgCluster {
	b.Helper()
	dataDir := benchSQL(b, dsn, "SHOW data_directory")
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		b.Fatal(err)
	}
	return pgCluster{pid: pid}
}

func (c pgCluster) children() []string {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", c.pid, c.pid))
	return strings.Fields(string(raw))
}

// settle waits (up to 2 s) until the cluster has no more processes than before a run: the
// backends of the run's sessions end after it, and the postmaster counts their CPU among its
// children's only once it has reaped them.
func (c pgCluster) settle(before int) {
	for end := time.Now().Add(2 * time.Second); len(c.children()) > before && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
}

// steady returns the cluster's number of processes once it holds still (up to 1 s): the
// benchmark's own sessions, just closed, end a moment later.
func (c pgCluster) steady() int {
	n := len(c.children())
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		time.Sleep(30 * time.Millisecond)
		m := len(c.children())
		if m == n {
			break
		}
		n = m
	}
	return n
}

// cpu returns the CPU seconds the cluster has used so far: its postmaster's, its children's
// that have exited, and its live children's (backends).
func (c pgCluster) cpu() float64 {
	stat := func(pid int) []string {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		return strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	}
	ticks := func(f []string, i ...int) float64 {
		t := 0.0
		for _, k := range i {
			if k < len(f) {
				v, _ := strconv.ParseFloat(f[k], 64)
				t += v
			}
		}
		return t
	}
	total := ticks(stat(c.pid), 11, 12, 13, 14) // utime, stime, cutime, cstime
	for _, ch := range c.children() {
		if cp, err := strconv.Atoi(ch); err == nil {
			total += ticks(stat(cp), 11, 12)
		}
	}
	return total / 100 // USER_HZ
}

// loadAverage is the machine's load average over the last minute (/proc/loadavg): how busy
// other work kept the cores the benchmark shares.
func loadAverage(b *testing.B) float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return v
}
