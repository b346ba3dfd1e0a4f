package exitserver_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/encryption"
)

// The audit says which keys the imported identities reach and who holds the others, in the
// order asked; bad IDs, too many IDs and a database down are refused for the whole request.
func TestAudit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	who, _ := f.db.AddUser()
	stranger, strangerID := f.db.AddUser()
	status, raw, _ := f.do(t, "PUT", "/v1/identities", testToken, importBody(who))
	require.Equal(t, 201, status, "%s", raw)
	idOf := func(identity string) string {
		ct, err := f.db.Encrypt(identity, encryption.V5, []byte("x"), encryption.EncryptOptions{})
		require.NoError(t, err)
		_, rid, err := encryption.ExtractResourceID(ct)
		require.NoError(t, err)
		return rid.ID.String()
	}
	mine, theirs, nobody := idOf(who), idOf(stranger), encryption.SimpleID{7}.String()
	body, _ := json.Marshal(map[string][]string{"ids": {mine, theirs, nobody}})
	status, raw, _ = f.do(t, "POST", "/v1/audit", testToken, strings.NewReader(string(body)))
	require.Equal(t, 200, status, "%s", raw)
	var ans exitserver.AuditAnswer
	require.NoError(t, json.Unmarshal(raw, &ans))
	require.Equal(t, base64.StdEncoding.EncodeToString(f.db.AppID()), ans.AppID)
	require.Equal(t, []exitserver.KeyAudit{
		{Reachable: true, Holders: []string{}, Provisional: []string{}},
		{Holders: []string{base64.StdEncoding.EncodeToString(strangerID)}, Provisional: []string{}},
		{Holders: []string{}, Provisional: []string{}},
	}, ans.Keys)

	for name, bad := range map[string]string{
		"not 16 bytes":  `{"ids": ["AAEC"]}`,
		"not base64":    `{"ids": ["!!!!!!!!!!!!!!!!!!!!!!=="]}`,
		"unknown field": `{"ids": [], "id": []}`,
		"no ids":        `{}`,
		"ids twice":     `{"ids": ["AAAAAAAAAAAAAAAAAAAAAA=="], "ids": []}`,
	} {
		status, raw, _ := f.do(t, "POST", "/v1/audit", testToken, strings.NewReader(bad))
		requireError(t, status, raw, 400, "invalid_body")
		_ = name
	}
	many, _ := json.Marshal(map[string][]string{"ids": make([]string, exitserver.AuditBatchIDs+1)})
	status, raw, _ = f.do(t, "POST", "/v1/audit", testToken, strings.NewReader(string(many)))
	requireError(t, status, raw, 413, "payload_too_large")

	f.db.SetDown(true)
	status, raw, _ = f.do(t, "POST", "/v1/audit", testToken, strings.NewReader(string(body)))
	requireError(t, status, raw, 503, "database_unavailable")
	f.db.SetDown(false)
	status, raw, _ = f.do(t, "POST", "/v1/audit", "", strings.NewReader(string(body)))
	requireError(t, status, raw, 401, "unauthorized")
}
