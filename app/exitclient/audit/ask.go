package audit

import (
	"context"
	"fmt"
	"sort"

	"github.com/idvault/idvault/app/exitclient"
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

// ask audits ids on the server, exitclient.AuditBatchIDs at a time, into the cache.
func (a *auditor) ask(ctx context.Context, ids []encryption.SimpleID) error {
	for len(ids) > 0 {
		n := min(len(ids), exitclient.AuditBatchIDs)
		ans, err := a.c.AuditIDs(ctx, ids[:n])
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
