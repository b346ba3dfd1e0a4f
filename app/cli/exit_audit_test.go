package cli_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// `exit audit` prints a summary and the holders to import for a person, or one JSON object
// with every item that is not reachable; its exit status says whether anything is missing.
func TestExitAuditCommand(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	alice, _ := db.AddNamedUser("alice@example.com")
	bob, bobID := db.AddNamedUser("bob@example.com")
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{}))
	_, err := exitclient.New(url, "").Import(context.Background(), []exitclient.Identity{{Value: alice, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	in := filepath.Join(dir, "data")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for name, owner := range map[string]string{"a.bin": alice, "b1.bin": bob, "b2.bin": bob} {
		ct, err := db.Encrypt(owner, encryption.V7, []byte(name), encryption.EncryptOptions{})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in, name), ct, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(in, "junk.txt"), []byte("hello"), 0o600))
	users := filepath.Join(dir, "users.txt") // as a Windows editor saves it: a BOM, CRLF
	require.NoError(t, os.WriteFile(users, []byte("\xef\xbb\xbfbob@example.com\r\n\nalice@example.com\n"), 0o600))

	out, errOut, code := clitest.RunRecords(t, "", "exit", "audit", "--url", url, "--in", in, "--users", users)
	require.Equal(t, 1, code, "missing items: %s", errOut)
	require.Contains(t, out, "total 4: reachable 1, missing 2, invalid 1")
	require.Contains(t, out, "bob@example.com (user ID "+base64.StdEncoding.EncodeToString(bobID)+") would open 2 more")
	require.Contains(t, out, "junk.txt: unknown format 104")

	out, errOut, code = clitest.RunRecords(t, "", "exit", "audit", "--url", url, "--in", in, "--users", users, "--json")
	require.Equal(t, 1, code, errOut)
	var rep struct {
		Summary       audit.Summary     `json:"summary"`
		MissingByUser []audit.UserCount `json:"missing_by_user"`
		Items         []audit.Item      `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, audit.Summary{Total: 4, Reachable: 1, Missing: 2, Invalid: 1}, rep.Summary)
	require.Equal(t, []audit.UserCount{{UserID: base64.StdEncoding.EncodeToString(bobID), User: "bob@example.com", Resources: 2}}, rep.MissingByUser)
	require.Len(t, rep.Items, 3)
	require.Equal(t, "b1.bin", rep.Items[0].Source)
	require.Equal(t, []audit.Holder{{UserID: base64.StdEncoding.EncodeToString(bobID), User: "bob@example.com"}}, rep.Items[0].Holders)
	require.Equal(t, 7, rep.Items[0].Format)

	// Once everything is reachable: exit 0, and an empty list of items.
	require.NoError(t, os.Remove(filepath.Join(in, "junk.txt")))
	_, err = exitclient.New(url, "").Import(context.Background(), []exitclient.Identity{{Value: bob, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	out, errOut, code = clitest.RunRecords(t, "", "exit", "audit", "--url", url, "--in", in, "--json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"summary": {"total": 3, "reachable": 3, "missing": 0, "invalid": 0}, "missing_by_user": [], "items": []}`, out)

	for name, args := range map[string][]string{
		"field with a directory": {"--in", in, "--field", "x"},
		"records without field":  {"--in", users},
		"no such input":          {"--in", filepath.Join(dir, "nope")},
	} {
		_, errOut, code := clitest.RunRecords(t, "", append([]string{"exit", "audit", "--url", url}, args...)...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
	}
}
