package e2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// interruptRows is the table's size: enough that the pipeline is still running once
// PostgreSQL has loaded its first rows (the moment the test interrupts it).
const interruptRows = 150_000

// exit/README.md's pipeline (psql \copy TO STDOUT | idvault exit decrypt-records | psql \copy FROM
// STDIN) stopped midway, once PostgreSQL has received decrypted rows, by the stops a user meets:
// the exit server killed (SIGKILL; decrypt-records stops once --retry-budget is spent),
// decrypt-records interrupted (SIGINT), and Ctrl-C at the terminal (SIGINT to the pipeline's
// process group; the loading psql, under setsid, does not get it: cancelled itself, its COPY's
// error would print the row it was storing). Each time decrypt-records ends its output on a
// whole record and then the stop line, so the COPY fails on that line: the table holds 0
// rows, and neither psql's output nor the PostgreSQL server log holds a clear value (a cut
// record would have been printed in COPY's error CONTEXT, in both). The same check finds a
// clear value in a line PostgreSQL does reject, so it is not blind.
func TestPsqlCopyPipelineInterrupted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs psql")
	}
	l := exitpgtest.LoadDump(t, gen.Options{Users: 8, Groups: 3, Resources: 40, Seed: 29})
	psql := pgtest.Bin(t, "psql")
	bin := apptest.Binary(t)
	dir := t.TempDir()

	url := "http://127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))
	startExitBinary(t, l, url)
	c := exitclient.New(url, exitpgtest.Token)
	ctx := context.Background()
	_, err := c.Import(ctx, exitpgtest.Identities(t, l.Dir), exitclient.ImportOptions{})
	require.NoError(t, err)

	// The ciphertexts that decrypt, and their clear values: what must never leak.
	var cts, clears [][]byte
	for _, e := range l.Manifest {
		if e.Expected != dump.ExpectOK || e.ClearSize < 8 || e.ClearSize > 8192 {
			continue
		}
		ct, err := os.ReadFile(filepath.Join(l.Dir, e.File))
		require.NoError(t, err)
		cts = append(cts, ct)
	}
	res, err := c.DecryptBatch(ctx, cts)
	require.NoError(t, err)
	var bodies []string
	for i, r := range res {
		if r.Code == "" {
			clears = append(clears, r.Clear)
			bodies = append(bodies, base64.StdEncoding.EncodeToString(cts[i]))
		}
	}
	require.Greater(t, len(clears), 5)

	seed := filepath.Join(dir, "seed.csv")
	f, err := os.Create(seed)
	require.NoError(t, err)
	w := csv.NewWriter(f)
	for i := range interruptRows {
		require.NoError(t, w.Write([]string{strconv.Itoa(i + 1), "f" + strconv.Itoa(i%len(bodies)), bodies[i%len(bodies)]}))
	}
	w.Flush()
	require.NoError(t, w.Error())
	require.NoError(t, f.Close())
	sql := func(q string) string {
		out, err := exec.Command(psql, l.DSN, "-v", "ON_ERROR_STOP=1", "-qAtc", q).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	sql(`CREATE TABLE messages (id int PRIMARY KEY, file text, body text); CREATE TABLE messages_clear (LIKE messages)`)
	sql(`\copy messages FROM '` + seed + `' WITH (FORMAT csv)`)

	// The check itself: a line PostgreSQL rejects is printed by psql and logged by the server.
	control := []byte("a control clear value that PostgreSQL rejects")
	cmd := exec.Command(psql, l.DSN, "-v", "ON_ERROR_STOP=1", "-c", `\copy messages_clear FROM STDIN WITH (FORMAT csv)`)
	cmd.Stdin = strings.NewReader("1,f," + base64.StdEncoding.EncodeToString(control) + ",extra column\n")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.NotEmpty(t, leaks(string(out), [][]byte{control}), "psql prints a rejected line: %s", out)
	require.NotEmpty(t, leaks(pgtest.ServerLog(t), [][]byte{control}), "the server logs a rejected line")

	env := append(os.Environ(), "DB="+l.DSN, "IDVAULT_EXIT__TOKEN="+exitpgtest.Token,
		"PATH="+filepath.Dir(bin)+":"+filepath.Dir(psql)+":"+os.Getenv("PATH"))
	for _, tc := range []struct {
		name   string
		status string // decrypt-records' exit status
		stop   func(t *testing.T, srv *apptest.Proc, pipeline *exec.Cmd)
	}{
		{"server SIGKILL", "1", func(t *testing.T, srv *apptest.Proc, _ *exec.Cmd) { srv.Kill9(t) }},
		{"client SIGINT", "130", func(t *testing.T, _ *apptest.Proc, pipeline *exec.Cmd) {
			pid := childRunning(t, pipeline.Process.Pid, "decrypt-records")
			require.NoError(t, syscall.Kill(pid, syscall.SIGINT))
		}},
		{"Ctrl-C to the pipeline", "130", func(t *testing.T, _ *apptest.Proc, pipeline *exec.Cmd) {
			require.NoError(t, syscall.Kill(-pipeline.Process.Pid, syscall.SIGINT))
		}},
		// No server at all: decrypt-records stops before it reads its input, and psql, told
		// that the first line is a header, must not skip the stop line as one.
		{"no server", "1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A server of its own (the first case kills it), over the same database.
			url := "http://127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))
			var srv *apptest.Proc
			if tc.stop != nil {
				srv = startExitBinary(t, l, url)
			}
			// exit/README.md's lines; --retry-budget shortens the wait for a dead server.
			script := strings.Replace(readmeBlock(t), "--errors errors.jsonl", "--errors errors.jsonl --retry-budget 3s", 1)
			pipeline := exec.Command("bash", "-c", script)
			pipeline.Dir = dir
			pipeline.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a terminal's job
			pipeline.Env = append(env, "URL="+url)
			var out bytes.Buffer
			pipeline.Stdout, pipeline.Stderr = &out, &out
			require.NoError(t, pipeline.Start())
			ended := make(chan error, 1)
			go func() { ended <- pipeline.Wait() }()

			// Interrupt once PostgreSQL has received decrypted rows.
			for loaded := 0; loaded == 0 && tc.stop != nil; {
				select {
				case <-ended:
					t.Fatalf("the pipeline ended before it was interrupted (raise interruptRows): %s", out.String())
				case <-time.After(20 * time.Millisecond):
				}
				loaded, _ = strconv.Atoi(sql(`SELECT coalesce(max(tuples_processed), 0) FROM pg_stat_progress_copy WHERE relid = 'messages_clear'::regclass`))
			}
			if tc.stop != nil {
				tc.stop(t, srv, pipeline)
			}
			<-ended

			text := out.String()
			const said = "exit status of each command:"
			require.Contains(t, text, said)
			fields := strings.Fields(text[strings.LastIndex(text, said)+len(said):])
			require.Len(t, fields, 3, text)
			require.Equal(t, tc.status, fields[1], "decrypt-records' exit status: %s", text)
			require.NotEqual(t, "0", fields[2], "psql's COPY fails: %s", text)
			require.Contains(t, text, "unterminated CSV quoted field", "the COPY fails on the stop line")
			require.Contains(t, text, "STOPPED (", "and names it")
			require.Equal(t, "0", sql(`SELECT count(*) FROM messages_clear`), "nothing is loaded")
			require.Empty(t, leaks(text, clears), "psql's output and decrypt-records' messages: %s", text)
			require.Empty(t, leaks(pgtest.ServerLog(t), clears), "the PostgreSQL server log")
		})
	}
}

// readmeBlock is the pipeline of exit/README.md's "Records kept in a database": its first sh
// block.
func readmeBlock(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "exit", "README.md"))
	require.NoError(t, err)
	doc := string(raw)
	_, after, ok := strings.Cut(doc[strings.Index(doc, "## Records kept in a database"):], "```sh\n")
	require.True(t, ok, "exit/README.md's section has an sh block")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	require.Contains(t, block, "set -o pipefail")
	require.Contains(t, block, "--errors errors.jsonl")
	return block
}

// leaks lists the clear values found in text, as the pipeline writes them (base64: any run of
// 16 characters of the value's base64 text, which a record cut anywhere in the value holds)
// or as raw bytes.
func leaks(text string, clears [][]byte) []string {
	var found []string
	for _, c := range clears {
		b64 := base64.StdEncoding.EncodeToString(c)
		hit := strings.Contains(text, string(c))
		n := min(16, len(b64))
		for i := 0; !hit && i+n <= len(b64); i += 4 { // from whole base64 quanta, as written
			hit = strings.Contains(text, b64[i:i+n])
		}
		if hit {
			found = append(found, b64)
		}
	}
	return found
}

// childRunning returns the pid of the child of parent whose command line holds arg.
func childRunning(t *testing.T, parent int, arg string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so fields count from its ')'.
		rest := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(rest) < 2 || rest[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, []byte(arg)) {
			return pid
		}
	}
	t.Fatalf("no child of %d runs %s", parent, arg)
	return 0
}
