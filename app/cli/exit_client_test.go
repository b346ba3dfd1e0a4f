package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
)

// A configuration error is one line on stderr and exit 2, before any file is touched.
func TestExitClientsConfigErrors(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{Token: "the-right-token-0123"}))
	port := strings.TrimPrefix(url, "http://127.0.0.1:")
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	clitest.WriteFiles(t, in, 30)
	ids := filepath.Join(dir, "ids.txt")
	require.NoError(t, os.WriteFile(ids, []byte("fake-identity-00\nfake-identity-01\n"), 0o600))
	env := []string{"IDVAULT_EXIT__TOKEN=the-wrong-token-0123"}

	for name, tc := range map[string]struct {
		url, want string
		env       []string
	}{
		"no scheme":   {"127.0.0.1:" + port, "is not a URL like http://127.0.0.1:8000", nil},
		"host only":   {"localhost:" + port, "is not a URL like", nil},
		"bad URL":     {"http://[::1", "is not a URL like", nil},
		"wrong token": {url, "refused the token (401 unauthorized)", env},
		"no token":    {url, "refused the token (401 unauthorized)", nil},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(name, " ", "-"))
		stdout, errOut, code := runExit(context.Background(), t, nil, tc.env, nil, "exit", "decrypt", "--url", tc.url, "--in", in, "--out", out)
		require.Equal(t, 2, code, "%s: %s %s", name, stdout, errOut)
		require.Empty(t, stdout, name)
		clitest.OneLine(t, errOut)
		require.Contains(t, errOut, tc.want, name)
		require.NotContains(t, errOut, "the-wrong-token", name)
		require.NoDirExists(t, out, "%s: nothing written", name)

		stdout, errOut, code = runExit(context.Background(), t, nil, tc.env, nil, "exit", "import", "--url", tc.url, ids)
		require.Equal(t, 2, code, "%s: %s %s", name, stdout, errOut)
		clitest.OneLine(t, errOut)
		require.Contains(t, errOut, tc.want, name)
	}
	for _, id := range []string{"fake-identity-00", "fake-identity-01"} {
		require.False(t, db.IsImported(id))
	}

	// --out inside --in, judged through a symlink: one line, exit 2, nothing created.
	link := filepath.Join(dir, "in-link")
	require.NoError(t, os.Symlink(in, link))
	_, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "decrypt", "--url", url, "--in", in, "--out", filepath.Join(link, "clear"))
	require.Equal(t, 2, code, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, "is inside --in")
	require.NoDirExists(t, filepath.Join(in, "clear"))
}

// A server that dies mid-run stops decrypt within a minute (a short --retry-budget here) with one
// message naming it, no failure per file and no part file; dead from the start, nothing is
// written at all.
func TestExitDecryptDeadServer(t *testing.T) {
	t.Parallel()
	srv := apptest.DyingExit(t, 4)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	clitest.WriteFiles(t, in, 80)

	run := func(out string) (string, string, int) {
		type result struct {
			stdout, stderr string
			code           int
		}
		done := make(chan result, 1)
		go func() {
			o, e, c := runExit(context.Background(), t, nil, nil, nil, "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out, "--jobs", "2", "--retry-budget", "300ms")
			done <- result{o, e, c}
		}()
		select {
		case r := <-done:
			return r.stdout, r.stderr, r.code
		case <-time.After(time.Minute):
			t.Fatal("a dead server did not stop the run within a minute")
			return "", "", 0
		}
	}
	stdout, errOut, code := run(out)
	require.Equal(t, 1, code, "%s %s", stdout, errOut)
	require.Empty(t, stdout, "no file is reported failed for the server's sake")
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, "stopped: no request to the exit server at "+srv.URL+" succeeded for")
	require.Contains(t, errOut, "80 files: ")
	require.Contains(t, errOut, "rerun to continue")
	parts, _ := filepath.Glob(filepath.Join(out, "*"+outfiles.PartSuffix))
	require.Empty(t, parts)

	fresh := filepath.Join(dir, "fresh")
	stdout, errOut, code = run(fresh)
	require.Equal(t, 1, code, "%s %s", stdout, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, srv.URL)
	require.Contains(t, errOut, "nothing decrypted")
	require.NoDirExists(t, fresh)

	ids := filepath.Join(dir, "ids.txt")
	require.NoError(t, os.WriteFile(ids, []byte("fake-identity-00\n"), 0o600))
	_, errOut, code = runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", srv.URL, "--retry-budget", "200ms", ids)
	require.Equal(t, 1, code, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, srv.URL)
}

// Ctrl-C (the context ending, as main wires SIGINT) mid-stream: exit 130, a summary of what
// is done, no Go error text, no part file left.
func TestExitDecryptInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	clitest.WriteFiles(t, in, 6)
	srv := apptest.HangingDecrypt(t, 2)
	go apptest.CancelWhenPart(out, srv.Hung, cancel)
	stdout, errOut, code := runExit(ctx, t, nil, nil, nil, "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out, "--jobs", "1")
	clitest.RequireInterrupted(t, out, stdout, errOut, code)

	// import too: a batch in flight when Ctrl-C comes.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	entered := make(chan struct{})
	imp := apptest.StandInExit(t, nil, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		close(entered)
		<-r.Context().Done()
	})
	go func() {
		<-entered
		cancel()
	}()
	ids := filepath.Join(dir, "ids.txt")
	require.NoError(t, os.WriteFile(ids, []byte("fake-identity-00\n"), 0o600))
	_, errOut, code = runExit(ctx, t, nil, nil, nil, "exit", "import", "--url", imp.URL, ids)
	require.Equal(t, 130, code, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, "interrupted: 0 of 1 identities handled")
	require.NotContains(t, errOut, "context")
}

// File names are printed quoted: control characters and terminal escapes never reach the
// terminal raw.
func TestExitDecryptQuotesNames(t *testing.T) {
	t.Parallel()
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error": {"code": "unsupported_format", "message": "bad \u001b]0;title\u0007 bytes", "trace_id": "x"}}`)
	}, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	name := "\x1b[31mred\nline\x07.bin"
	require.NoError(t, os.WriteFile(filepath.Join(in, name), []byte{1}, 0o600))
	stdout, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", filepath.Join(dir, "out"))
	require.Equal(t, 1, code, errOut)
	require.Contains(t, stdout, `"\x1b[31mred\nline\a.bin"`+"\tunsupported_format\t")
	require.Contains(t, stdout, `bad \x1b]0;title\a bytes`)
	for _, s := range []string{stdout, errOut} {
		require.NotContains(t, s, "\x1b")
		require.NotContains(t, s, "\x07")
	}
}

// exit import takes bare identity lines, as createIdentity returns them, mixed with JSON lines;
// a bad or over-long line is named by its number.
func TestExitImportBareLines(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{}))
	var lines, ids []string
	for i := range 9 {
		id, _ := db.AddUser()
		ids = append(ids, id)
		if i%3 == 0 {
			lines = append(lines, fmt.Sprintf(`{"email": "u%d@example.com", "identity": %q}`, i, id))
		} else {
			lines = append(lines, id)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "ids.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	_, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", url, file)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "9 identities: 9 imported")
	for _, id := range ids {
		require.True(t, db.IsImported(id))
	}

	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte(ids[0]+"\n"+strings.Repeat("A", 2<<20)+"\n"), 0o600))
	_, errOut, code = runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", url, bad)
	require.Equal(t, 1, code, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, "line 2: longer than 65536 bytes")
	require.NotContains(t, errOut, "token too long")

	// Several bad lines: one line each.
	require.NoError(t, os.WriteFile(bad, []byte(ids[0]+"\nnot,base64\n{}\n"), 0o600))
	_, errOut, code = runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", url, bad)
	require.Equal(t, 1, code, errOut)
	require.Equal(t, 2, strings.Count(errOut, "\n"), errOut)
	require.Contains(t, errOut, "line 2: not a JSON string or object")
	require.Contains(t, errOut, "\n  line 3: no \"identity\" field")

	// A file without a single identity (empty, blank lines, "[]") is a mistake, such as a
	// redirect that failed: exit 1, not "0 identities imported" and success.
	for _, empty := range []string{"", "\n \r\n", "[]"} {
		require.NoError(t, os.WriteFile(bad, []byte(empty), 0o600))
		_, errOut, code = runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", url, bad)
		require.Equal(t, 1, code, "%q: %s", empty, errOut)
		require.Contains(t, errOut, "holds no identity")
	}
}

// exit decrypt refuses, with exit status 2 and nothing written, inputs whose names are equal up
// to case (macOS's default volumes would keep one); --exact-names decrypts both.
func TestExitDecryptCaseFoldedNames(t *testing.T) {
	t.Parallel()
	srv := apptest.StandInExit(t, apptest.EchoDecrypt, nil)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for _, name := range []string{"A.bin", "a.bin"} {
		require.NoError(t, os.WriteFile(filepath.Join(in, name), []byte(name), 0o600))
	}
	_, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `"A.bin" and "a.bin"`)
	require.Contains(t, errOut, "--exact-names")
	clitest.OneLine(t, errOut)
	require.NoDirExists(t, out)

	_, errOut, code = runExit(context.Background(), t, nil, nil, nil, "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out, "--exact-names")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "2 decrypted")
}

// An exit command's flag given an empty value (an unset shell variable: --token "$TOKEN") is a
// usage error before anything is read or written, not the flag left out: --token "" would fall
// back to IDVAULT_EXIT__TOKEN, --db "" to IDVAULT_EXIT__DB, --age-recipients-file "" would write
// clear files, --errors "" would send the failures to standard error.
func TestExitEmptyFlagValuesAreRefused(t *testing.T) {
	t.Parallel()
	srv := apptest.StandInExit(t, apptest.EchoDecrypt, nil)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	require.NoError(t, os.MkdirAll(in, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in, "f.bin"), []byte("x"), 0o600))
	records, ids := filepath.Join(dir, "r.csv"), filepath.Join(dir, "ids.txt")
	require.NoError(t, os.WriteFile(records, []byte("id,e\n1,AAAA\n"), 0o600))
	require.NoError(t, os.WriteFile(ids, []byte("x\n"), 0o600))
	env := []string{"IDVAULT_EXIT__TOKEN=the-token-from-the-env-0123", "IDVAULT_EXIT__DB=postgres://127.0.0.1:1/x", "IDVAULT_EXIT__LISTEN=127.0.0.1:0", "IDVAULT_EXIT__APP_ID=" + testAppID}
	decrypt := []string{"exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out}
	recs := []string{"exit", "decrypt-records", "--url", srv.URL, "--in", records, "--out", out, "--field", "e"}
	audit := []string{"exit", "audit", "--url", srv.URL, "--in", in}
	for _, args := range [][]string{
		append(decrypt, "--token", ""), append(decrypt, "--url="), append(decrypt, "--age-recipients-file", ""),
		append(decrypt, "--age-recipient", ""), {"exit", "decrypt", "--url", srv.URL, "--in", "", "--out", out},
		{"exit", "decrypt", "--url", srv.URL, "--in", in, "--out="},
		{"exit", "import", "--url", srv.URL, "--token", "", ids}, {"exit", "import", "--url", "", ids},
		append(recs, "--token", ""), append(recs, "--errors", ""), append(recs, "--format="), append(recs, "--age-recipients-file="),
		{"exit", "decrypt-records", "--url", srv.URL, "--in", records, "--out", "", "--field", "e"},
		append(audit, "--token="), append(audit, "--users", ""),
		{"exit", "forget", "--db", ""}, {"exit", "load-dump", "--db", "", in},
		{"exit", "gen-dump", "--out", ""}, {"exit", "gen-dump", "--out", out, "--app-secret-file", ""},
		{"exit", "--token", ""}, {"exit", "--db="}, {"exit", "--listen", ""}, {"exit", "--config="},
	} {
		// A server that starts anyway stops once ready, so the test fails rather than hangs.
		ctx, cancel := context.WithCancel(context.Background())
		_, errOut, code := runExit(ctx, t, exitfake.New(), env, func(string) { cancel() }, args...)
		cancel()
		require.Equal(t, 2, code, "%q: %s", args, errOut)
		require.Contains(t, errOut, "is given an empty value", "%q", args)
		require.NoDirExists(t, out, "%q", args)
		require.NoFileExists(t, out, "%q", args)
	}
}
