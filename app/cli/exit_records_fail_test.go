package cli_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/apptest/external"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/exit/encryption"
)

// --errors on a disk that is full: the failures that were still buffered at the end cannot be
// written, and the run says so (exit 1, naming the disk's error) instead of leaving an empty
// --errors beside a summary that counts them; the output is not renamed into place, since the
// list of what failed in it is lost.
func TestExitDecryptRecordsErrorsOnAFullDisk(t *testing.T) {
	mnt := external.Tmpfs(t, "64k")
	external.FillTmpfs(t, mnt)
	srv := apptest.StandInExit(t, nil, nil) // every field is refused before any batch is sent
	dir := t.TempDir()
	in, out, errs := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), filepath.Join(mnt, "errors.jsonl")
	require.NoError(t, os.WriteFile(in, []byte("id,v\n1,not base64!\n2,nor this!\n"), 0o600))

	_, errOut, code := clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", srv.URL, "--in", in, "--out", out, "--field", "v", "--errors", errs)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "write errors: ")
	require.Contains(t, errOut, "no space left on device")
	require.Contains(t, errOut, "no output file written")
	require.NoFileExists(t, out)
	require.NoFileExists(t, out+outfiles.PartSuffix)

	// To standard output, the records are all out already: the message says so, and the stop
	// line after them makes a loader refuse the whole (the failures it holds are not listed).
	stdout, errOut, code := clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", srv.URL, "--in", in, "--out", "-", "--field", "v", "--errors", errs)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "no space left on device")
	require.Contains(t, errOut, "every record read was written to standard output, then the stop line")
	require.Equal(t, "id,v\n1,not base64!\n2,nor this!\n"+string(records.StopLine("an error, named on its standard error")), stdout)
	require.NoFileExists(t, errs)
	require.NoFileExists(t, errs+outfiles.PartSuffix)
}

// A records file that grows or is cut short while it is read (an export still running) stops
// the run: the output would look complete and hold another number of records than the file.
// Nothing is written; a rerun on the finished file decrypts it all.
func TestExitDecryptRecordsInputChanged(t *testing.T) {
	t.Parallel()
	db, who, real := clitest.ExitWithOneUser(t)
	enc := func(clear string) string {
		ct, err := db.Encrypt(who, encryption.V10, []byte(clear), encryption.EncryptOptions{})
		require.NoError(t, err)
		return base64.StdEncoding.EncodeToString(ct)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv")
	require.NoError(t, os.WriteFile(in, []byte("id,v\n1,"+enc("one")+"\n"), 0o600))

	// The exporter is still writing: the second line lands while the first batch is decrypted.
	srv := appendOnFirst(t, real, "/v1/decrypt-batch", in, "2,"+enc("two")+"\n")
	_, errOut, code := clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", srv, "--in", in, "--out", out, "--field", "v")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "changed while it was being read")
	require.NoFileExists(t, out)

	_, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt-records", "--url", srv, "--in", in, "--out", out, "--field", "v")
	require.Equal(t, 0, code, errOut)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "id,v\n1,one\n2,two\n", string(got))
	require.True(t, strings.Contains(errOut, "2 records: 2 fields decrypted"), errOut)
}

// appendOnFirst is a proxy to the exit server at real that appends line to the file path when
// the first request to route arrives, as an exporter still writing the file would.
func appendOnFirst(t *testing.T, real, route, path, line string) string {
	t.Helper()
	target, err := url.Parse(real)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == route {
			once.Do(func() {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					_, _ = f.WriteString(line)
					f.Close()
				}
			})
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// exit audit of a records file that changes while it is read stops (exit 1) rather than report
// counts of neither version of the file.
func TestExitAuditRecordsInputChanged(t *testing.T) {
	t.Parallel()
	db, who, real := clitest.ExitWithOneUser(t)
	ct, err := db.Encrypt(who, encryption.V10, []byte("one"), encryption.EncryptOptions{})
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	line := fmt.Sprintf("{\"v\":%q}\n", base64.StdEncoding.EncodeToString(ct))
	require.NoError(t, os.WriteFile(in, []byte(line), 0o600))
	srv := appendOnFirst(t, real, "/v1/audit", in, line)

	_, errOut, code := clitest.RunRecords(t, "", "exit", "audit", "--url", srv, "--in", in, "--field", "v")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "changed while it was being read")
	out, errOut, code := clitest.RunRecords(t, "", "exit", "audit", "--url", srv, "--in", in, "--field", "v")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "total 2: reachable 2")
}
