package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// decrypt-records between files and standard streams: exit 0 when everything decrypted, 1
// with every record still written and the failures in --errors, 2 for usage errors; the output
// file appears only once complete.
func TestExitDecryptRecordsCommand(t *testing.T) {
	t.Parallel()
	db, who, url := clitest.ExitWithOneUser(t)
	stranger, _ := db.AddUser()
	enc := func(identity, clear string) string {
		ct, err := db.Encrypt(identity, encryption.V10, []byte(clear), encryption.EncryptOptions{})
		require.NoError(t, err)
		return base64.StdEncoding.EncodeToString(ct)
	}
	good := "id,email\n1," + enc(who, "a@example.com") + "\n2,\n"
	out, errOut, code := clitest.RunRecords(t, good, "exit", "decrypt-records", "--url", url, "--in", "-", "--out", "-", "--format", "csv", "--field", "email")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "id,email\n1,a@example.com\n2,\n", out)
	require.Contains(t, errOut, "2 records: 1 fields decrypted, 1 empty or null, 0 failed")

	dir := t.TempDir()
	in, dst, errs := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "errors.jsonl")
	notMine := enc(stranger, "hidden")
	require.NoError(t, os.WriteFile(in, []byte(`{"e":"`+enc(who, "x")+`"}`+"\n"+`{"e":"`+notMine+`"}`+"\n"), 0o600))
	out, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", url, "--in", in, "--out", dst, "--field", "e", "--errors", errs)
	require.Equal(t, 1, code, "a failed field: %s %s", out, errOut)
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, `{"e":"x"}`+"\n"+`{"e":"`+notMine+`"}`+"\n", string(got), "every record is written, the failed one with its ciphertext")
	raw, err := os.ReadFile(errs)
	require.NoError(t, err)
	var fe records.FieldError
	require.NoError(t, json.Unmarshal(raw, &fe))
	require.Equal(t, records.FieldError{Record: 2, Field: "e", Code: "key_not_found", Message: fe.Message}, fe)
	require.True(t, strings.HasSuffix(string(raw), "}\n") && bytes.Count(raw, []byte("\n")) == 1, "one JSON line per failure: %s", raw)
	_, err = os.Stat(dst + outfiles.PartSuffix)
	require.True(t, os.IsNotExist(err), "no temporary file left")

	// Without --errors, or with --errors - ("-" is a standard stream, as for --in and --out,
	// not a file named "-"), the failures go to standard error, as the same JSON lines.
	for _, args := range [][]string{{}, {"--errors", "-"}} {
		_, errOut, code = clitest.RunRecords(t, "", append([]string{"exit", "decrypt-records", "--url", url, "--in", in, "--out", "-", "--field", "e"}, args...)...)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, `{"record":2,"field":"e","code":"key_not_found"`, args)
	}

	// A run that stops (the server refuses the token) leaves neither the output nor its
	// temporary file.
	// A refused token is found by the probe, before anything is written: exit 2.
	locked, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{Token: "right-token-0123456789"}))
	_, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", locked, "--token", "wrong", "--in", in, "--out", filepath.Join(dir, "none.jsonl"), "--field", "e")
	require.Equal(t, 2, code, "a refused token is a configuration error: %s", errOut)
	require.Contains(t, errOut, "refused the token")

	// A server that stops answering mid-run (ready, but every batch 503) stops the run once the
	// retry budget is spent: exit 1, and neither the output nor its temporary file is left.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/readyz" {
			_, _ = w.Write([]byte(`{"status": "ready", "checks": {"database": "ok"}}`))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error": {"status": 503, "code": "database_unavailable", "message": "down", "trace_id": "t"}}`))
	}))
	defer down.Close()
	_, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", down.URL, "--retry-budget", "300ms", "--in", in, "--out", filepath.Join(dir, "none.jsonl"), "--field", "e")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "stopped")
	require.Contains(t, errOut, "no output file written")
	for _, name := range []string{"none.jsonl", "none.jsonl" + outfiles.PartSuffix} {
		_, err = os.Stat(filepath.Join(dir, name))
		require.True(t, os.IsNotExist(err), "%s must not exist after a stopped run", name)
	}

	require.NoError(t, os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "link.jsonl")))
	for name, args := range map[string][]string{
		"no format from stdin":   {"--in", "-", "--out", "-", "--field", "e"},
		"no field":               {"--in", in, "--out", "-"},
		"unknown clear encoding": {"--in", in, "--out", "-", "--field", "e", "--clear-encoding", "rot13"},
		"column not in header":   {"--in", "-", "--out", "-", "--field", "nope", "--format", "csv"},
		"same file":              {"--in", in, "--out", in, "--field", "e"},
		"errors on the input":    {"--in", in, "--out", "-", "--field", "e", "--errors", in},
		"errors on the output":   {"--in", in, "--out", filepath.Join(dir, "new.jsonl"), "--field", "e", "--errors", filepath.Join(dir, "new.jsonl")},
		"missing input":          {"--in", filepath.Join(dir, "nope.csv"), "--out", "-", "--field", "e"},
		"output a directory":     {"--in", in, "--out", dir, "--field", "e"},
		"output a symlink":       {"--in", in, "--out", filepath.Join(dir, "link.jsonl"), "--field", "e"},
	} {
		_, errOut, code := clitest.RunRecords(t, "a,b\n1,2\n", append([]string{"exit", "decrypt-records", "--url", url}, args...)...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
	}
	kept, err := os.ReadFile(in)
	require.NoError(t, err)
	require.Contains(t, string(kept), notMine, "--errors naming --in must not truncate the records")
	_, err = os.Stat(filepath.Join(dir, "new.jsonl"))
	require.True(t, os.IsNotExist(err), "a usage error writes nothing")
	fi, err := os.Lstat(filepath.Join(dir, "link.jsonl"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "a symlink at --out is not replaced")
}

// An input that holds nothing (empty, blank lines only), in either format, is exit 1 with a
// message naming it and nothing written, as exit import on a file that holds no identity; an
// empty JSON-lines input used to pass as success, an empty CSV as a usage error. A CSV header
// alone is an empty table (psql's \copy of one, HEADER on): its header goes through, exit 0, so
// the documented \copy pipeline works on an empty table too.
func TestExitDecryptRecordsNoRecord(t *testing.T) {
	t.Parallel()
	url, _ := apptest.ServeServer(t, exitserver.New(exitfake.New(), exitserver.Config{}))
	dir := t.TempDir()
	for _, tc := range []struct{ name, format, content string }{
		{"empty.csv", "csv", ""},
		{"empty.jsonl", "jsonl", ""},
		{"blank.jsonl", "jsonl", "\n\n"},
	} {
		in, dst := filepath.Join(dir, tc.name), filepath.Join(dir, "out-"+tc.name)
		require.NoError(t, os.WriteFile(in, []byte(tc.content), 0o600))
		out, errOut, code := clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", url, "--in", in, "--out", dst, "--format", tc.format, "--field", "email")
		require.Equal(t, 1, code, "%s: %s", tc.name, errOut)
		require.Contains(t, errOut, strconv.Quote(in)+" holds no record", tc.name)
		require.Contains(t, errOut, "nothing written", tc.name)
		require.Empty(t, out)
		require.NoFileExists(t, dst, tc.name)
		require.NoFileExists(t, dst+outfiles.PartSuffix, tc.name)

		out, errOut, code = clitest.RunRecords(t, tc.content, "exit", "decrypt-records", "--url", url, "--in", "-", "--out", "-", "--format", tc.format, "--field", "email")
		require.Equal(t, 1, code, "%s on standard input: %s", tc.name, errOut)
		require.Contains(t, errOut, "standard input holds no record", tc.name)
		require.Empty(t, out, "%s: nothing reaches standard output", tc.name)
	}
	for _, header := range []string{"id,email\r\n", "id,email\n\n\n"} {
		out, errOut, code := clitest.RunRecords(t, header, "exit", "decrypt-records", "--url", url, "--in", "-", "--out", "-", "--format", "csv", "--field", "email")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, header, out, "an empty table's header goes through byte for byte")
		require.Contains(t, errOut, "0 records")
	}
}
