package exitclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/idvault/idvault/exit/encryption"
)

// union is the holders of a and b, each once, users first (as the server lists them).
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := append([]string(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range a {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { // users first, as the server lists them
		if pi, pj := isProvisional(out[i]), isProvisional(out[j]); pi != pj {
			return pj
		}
		return out[i] < out[j]
	})
	return out
}

// ask audits ids on the server, AuditBatchIDs at a time, into the cache.
func (a *auditor) ask(ctx context.Context, ids []encryption.SimpleID) error {
	const max = 10000 // exitserver.AuditBatchIDs
	for len(ids) > 0 {
		n := min(len(ids), max)
		ans, err := a.c.auditIDs(ctx, ids[:n])
		if err != nil {
			return err
		}
		if len(ans.Keys) != n {
			return fmt.Errorf("audit: the server answered %d keys for %d IDs", len(ans.Keys), n)
		}
		if a.names == nil {
			if err := a.nameHolders(ans.AppID); err != nil {
				return err
			}
		}
		for i, k := range ans.Keys {
			holders := k.Holders
			if len(k.Provisional) > 0 {
				holders = append(holders, k.Provisional...)
			}
			a.cache[ids[i]] = keyState{reachable: k.Reachable, holders: holders}
		}
		ids = ids[n:]
	}
	return nil
}

type auditAnswer struct {
	AppID string `json:"app_id"`
	Keys  []struct {
		Reachable   bool     `json:"reachable"`
		Holders     []string `json:"holders"`
		Provisional []string `json:"provisional"`
	} `json:"keys"`
}

// auditIDs is one POST /v1/audit.
func (c *Client) auditIDs(ctx context.Context, ids []encryption.SimpleID) (*auditAnswer, error) {
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
	var ans auditAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, &errTransport{fmt.Errorf("read the audit answer: %w", err)}
	}
	return &ans, nil
}
