package exitpg_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
)

// The audit's advice, followed, works on a gen-dump dump in PostgreSQL: before any import
// every resource that decrypts is missing and names its holders (by email through --users);
// importing exactly the users it names makes every one of them reachable, and they decrypt to
// the manifest's bytes.
func TestAuditAdviceFollowed(t *testing.T) {
	t.Parallel()
	l := loadDump(t, dump.Options{Users: 10, Groups: 4, Resources: 60, DecoyApps: 1, Seed: 31})
	in := serve(t, l, 0)
	lines, err := dump.ReadIdentities(l.dir)
	require.NoError(t, err)
	byEmail := map[string]string{}
	var emails []string
	for _, line := range lines {
		byEmail[line.Email] = line.Identity
		emails = append(emails, line.Email)
	}
	manifest := map[string]dump.ManifestEntry{}
	for _, e := range l.manifest {
		rel, err := filepath.Rel("data", e.File)
		require.NoError(t, err)
		manifest[filepath.ToSlash(rel)] = e
	}
	audit := func() (exitclient.AuditReport, map[string]exitclient.AuditItem) {
		items := map[string]exitclient.AuditItem{}
		rep, err := in.client.AuditTree(context.Background(), filepath.Join(l.dir, "data"), exitclient.AuditOptions{Users: emails,
			Item: func(it exitclient.AuditItem) error { items[it.Source] = it; return nil }})
		require.NoError(t, err)
		return rep, items
	}

	rep, items := audit()
	require.Equal(t, int64(len(l.manifest)), rep.Summary.Total)
	require.Zero(t, rep.Summary.Reachable, "nothing imported yet")
	for src, e := range manifest {
		if e.Expected != dump.ExpectOK {
			continue
		}
		it, ok := items[src]
		require.True(t, ok, src)
		require.Equal(t, exitclient.AuditMissing, it.Status, src)
		require.NotEmpty(t, it.Holders, "%s: a resource that decrypts has holders", src)
		require.Equal(t, e.ResourceID, it.ResourceID, src)
		for _, h := range it.Holders {
			require.NotEmpty(t, h.User, "%s: every holder is a user of identities.jsonl, named by --users", src)
		}
	}
	require.NotEmpty(t, rep.MissingByUser)

	// Import exactly the users the audit names: the first holder of each missing resource.
	want := map[string]bool{}
	for src, e := range manifest {
		if e.Expected == dump.ExpectOK {
			want[items[src].Holders[0].User] = true
		}
	}
	var ids []exitclient.Identity
	for email := range want {
		ids = append(ids, exitclient.Identity{Value: byEmail[email], Line: len(ids) + 1})
	}
	_, err = in.client.Import(context.Background(), ids, exitclient.ImportOptions{})
	require.NoError(t, err)
	require.Less(t, len(ids), len(lines), "fewer identities than the whole file suffice")

	rep, items = audit()
	for src, e := range manifest {
		if e.Expected == dump.ExpectOK {
			_, listed := items[src]
			require.False(t, listed, "%s is reachable after importing its holders", src)
		}
	}
	out := filepath.Join(t.TempDir(), "clear")
	_, err = in.client.DecryptTree(context.Background(), filepath.Join(l.dir, "data"), out, exitclient.DecryptOptions{})
	require.NoError(t, err)
	for src, e := range manifest {
		if e.Expected != dump.ExpectOK {
			continue
		}
		got, err := os.ReadFile(filepath.Join(out, src))
		require.NoError(t, err, src)
		sum := sha256.Sum256(got)
		require.Equal(t, e.SHA256, hex.EncodeToString(sum[:]), src)
	}
	t.Logf("audit after import: %+v", rep.Summary)
}
