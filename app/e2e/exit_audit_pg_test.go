package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/exit/dump"
)

// `exit audit --in -` on records from standard input, against the real exit server over a
// gen-dump whose keys went also to provisional identities nobody claimed (some only to one):
// the text advice lists those provisional identities to import beside the users, named by
// email through --users email: lines; --identities names every holder by its line; importing
// exactly the lines it names makes every record reachable, and decrypt-records opens them all.
func TestExitAuditProvisionalHolders(t *testing.T) {
	t.Parallel()
	dsn, dir, dumpDir := binaryDump(t, "--users", "6", "--resources", "12", "--provisional-only", "3", "--formats", "3,5,9")
	_, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "load-dump", "--db", dsn, dumpDir)
	require.Equal(t, 0, code, errOut)
	app, err := dump.ReadApp(dumpDir)
	require.NoError(t, err)
	const token = "audit-token-0123456789"
	port := apptest.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"IDVAULT_EXIT__TOKEN=" + token, "IDVAULT_EXIT__DB=" + dsn}
	apptest.StartBinary(t, dir, env, url, "exit", "--app-id", base64.StdEncoding.EncodeToString(app.ID), "--listen", "127.0.0.1:"+strconv.Itoa(port))

	// The records: every ciphertext the manifest says decrypts, as psql's \copy ... TO STDOUT
	// would give them.
	manifest, err := dump.ReadManifest(dumpDir)
	require.NoError(t, err)
	var records strings.Builder
	records.WriteString("file,v\n")
	n := 0
	for _, e := range manifest {
		if e.Expected != dump.ExpectOK {
			continue
		}
		ct, err := os.ReadFile(filepath.Join(dumpDir, e.File))
		require.NoError(t, err)
		records.WriteString(e.File + "," + base64.StdEncoding.EncodeToString(ct) + "\n")
		n++
	}
	lines, err := dump.ReadIdentities(dumpDir)
	require.NoError(t, err)
	var users strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l.Email, "invitee") { // gen-dump's provisional identities
			users.WriteString("email:" + l.Email + "\n")
		} else {
			users.WriteString(l.Email + "\n")
		}
	}
	usersFile := filepath.Join(dir, "users.txt")
	require.NoError(t, os.WriteFile(usersFile, []byte(users.String()), 0o600))
	runAudit := func(args ...string) (string, string, int) {
		return clitest.RunRecords(t, records.String(), append([]string{"exit", "audit", "--url", url, "--token", token,
			"--in", "-", "--format", "csv", "--field", "v"}, args...)...)
	}

	out, errOut, code := runAudit("--users", usersFile)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "total "+strconv.Itoa(n)+": reachable 0, missing "+strconv.Itoa(n)+", invalid 0")
	require.Contains(t, out, "importing these identities (users' and provisional identities')")
	require.Regexp(t, `provisional identity email:invitee\d+@example\.com \(hashed_email:[A-Za-z0-9+/]{43}=\) would open \d+ more`, out)
	require.Regexp(t, `user\d+@example\.com \(user ID [A-Za-z0-9+/]{43}=\) would open \d+ more`, out)

	// Without names, a provisional identity is its hash, and the report says how to name it.
	out, _, code = runAudit()
	require.Equal(t, 1, code)
	require.Regexp(t, `\n  provisional identity hashed_email:[A-Za-z0-9+/]{43}= would open`, out)
	require.Contains(t, out, "--identities FILE")

	idFile := filepath.Join(dumpDir, dump.IdentitiesFile)
	out, errOut, code = runAudit("--identities", idFile)
	require.Equal(t, 1, code, errOut)
	require.Regexp(t, regexp.QuoteMeta("provisional identity email:invitee")+`\d+@example\.com \(hashed_email:[A-Za-z0-9+/]{43}=, line \d+ of `+regexp.QuoteMeta(idFile)+`\)`, out)

	out, errOut, code = runAudit("--identities", idFile, "--json")
	require.Equal(t, 1, code, errOut)
	var rep struct {
		Summary       audit.Summary     `json:"summary"`
		MissingByUser []audit.UserCount `json:"missing_by_user"`
		Items         []audit.Item      `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Items, n)
	provisional := 0
	for _, u := range rep.MissingByUser {
		require.Positive(t, u.Line, "%+v: every holder is in identities.jsonl", u)
		if u.Provisional != "" {
			provisional++
			require.Equal(t, "email:"+lines[u.Line-1].Email, u.User)
		} else {
			require.Empty(t, u.User, "a user's name comes from --users only")
		}
	}
	require.Positive(t, provisional)
	for _, raw := range strings.Split(strings.TrimSpace(out), `"holders":`)[1:] {
		require.True(t, strings.HasPrefix(raw, `[{"user_id":"`) || strings.HasPrefix(raw, `[{"provisional":"hashed_email:`), raw[:min(80, len(raw))])
	}

	// Follow the advice: import the first holder of each record, by its line.
	want := map[int]bool{}
	for _, it := range rep.Items {
		want[it.Holders[0].Line] = true
	}
	var picked []string
	for line := range want {
		picked = append(picked, lines[line-1].Identity)
	}
	pickedFile := filepath.Join(dir, "picked.txt")
	require.NoError(t, os.WriteFile(pickedFile, []byte(strings.Join(picked, "\n")+"\n"), 0o600))
	_, errOut, code = clitest.RunRecords(t, "", "exit", "import", "--url", url, "--token", token, pickedFile)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = runAudit("--identities", idFile)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "total "+strconv.Itoa(n)+": reachable "+strconv.Itoa(n)+", missing 0, invalid 0")
	clearFile := filepath.Join(dir, "clear.csv")
	_, errOut, code = clitest.RunRecords(t, records.String(), "exit", "decrypt-records", "--url", url, "--token", token,
		"--in", "-", "--format", "csv", "--field", "v", "--clear-encoding", "hex", "--out", clearFile)
	require.Equal(t, 0, code, errOut)
	raw, err := os.ReadFile(clearFile)
	require.NoError(t, err)
	sums := map[string]string{}
	for _, e := range manifest {
		sums[e.File] = e.SHA256
	}
	rows := strings.Split(strings.TrimSpace(string(raw)), "\n")[1:]
	require.Len(t, rows, n)
	for _, row := range rows {
		file, value, _ := strings.Cut(row, ",")
		clear, err := hex.DecodeString(value)
		require.NoError(t, err)
		sum := sha256.Sum256(clear)
		require.Equal(t, sums[file], hex.EncodeToString(sum[:]), file)
	}
}
