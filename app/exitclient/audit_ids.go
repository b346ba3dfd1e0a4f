package exitclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/idvault/idvault/exit/encryption"
)

// AuditBatchIDs is the most IDs one AuditIDs call takes (exitserver.AuditBatchIDs).
const AuditBatchIDs = 10000

// AuditAnswer is the server's audit of a list of key IDs: the app's ID, and for each key whether
// an imported identity reaches it, and the users (base64 hashed user IDs) and the provisional
// identities nobody claimed ("hashed_TARGET:<base64>") that hold it.
type AuditAnswer struct {
	AppID string `json:"app_id"`
	Keys  []struct {
		Reachable   bool     `json:"reachable"`
		Holders     []string `json:"holders"`
		Provisional []string `json:"provisional"`
	} `json:"keys"`
}

// AuditIDs asks the server (one POST /v1/audit) which of the key IDs ids the imported identities
// reach, and who holds the others: one answer per ID, in order (up to AuditBatchIDs IDs).
func (c *Client) AuditIDs(ctx context.Context, ids []encryption.SimpleID) (*AuditAnswer, error) {
	req := struct {
		IDs []string `json:"ids"`
	}{IDs: make([]string, len(ids))}
	for i, id := range ids {
		req.IDs[i] = id.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	raw, err := c.sendRead(ctx, http.MethodPost, "/v1/audit", "application/json", body, 64<<20)
	if err != nil {
		return nil, err
	}
	var ans AuditAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, &errTransport{fmt.Errorf("read the audit answer: %w", err)}
	}
	return &ans, nil
}
