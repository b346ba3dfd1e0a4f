package exitpg_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
)

// The audit's advice, followed, works on a gen-dump dump in PostgreSQL that has resources
// only a provisional identity nobody claimed opens: before any import every resource that
// decrypts is missing and names its holders, users and provisional identities, each found in
// identities.jsonl (--identities) by its line, a provisional one also by its email; importing
// exactly the identities it names (the first holder of each resource) makes every one of them
// reachable, and they decrypt to the manifest's bytes. The key published only to the
// provisional identity withheld from identities.jsonl names it by its hash alone.
func TestAuditAdviceFollowed(t *testing.T) {
	t.Parallel()
	const provOnly = 6
	l := exitpgtest.LoadDump(t, gen.Options{Users: 10, Groups: 4, Resources: 60, ProvisionalOnly: provOnly, DecoyApps: 1, Seed: 31})
	in := exitpgtest.Serve(t, l, 0)
	idFile := filepath.Join(l.Dir, dump.IdentitiesFile)
	lines, err := dump.ReadIdentities(l.Dir)
	require.NoError(t, err)
	manifest := map[string]dump.ManifestEntry{}
	for _, e := range l.Manifest {
		rel, err := filepath.Rel("data", e.File)
		require.NoError(t, err)
		manifest[filepath.ToSlash(rel)] = e
	}
	runAudit := func() (audit.Report, map[string]audit.Item) {
		f, err := os.Open(idFile)
		require.NoError(t, err)
		defer f.Close()
		items := map[string]audit.Item{}
		rep, err := audit.Tree(context.Background(), in.Client, filepath.Join(l.Dir, "data"), audit.Options{Identities: f,
			Item: func(it audit.Item) error { items[it.Source] = it; return nil }})
		require.NoError(t, err)
		return rep, items
	}

	rep, items := runAudit()
	require.Equal(t, int64(len(l.Manifest)), rep.Summary.Total)
	require.Zero(t, rep.Summary.Reachable, "nothing imported yet")
	provisionalOnly, sharedWithProvisional := 0, 0
	for src, e := range manifest {
		it, ok := items[src]
		require.True(t, ok, src)
		if e.Case == "key_only_for_withheld_provisional_identity" {
			require.Len(t, it.Holders, 1, src)
			h := it.Holders[0]
			require.True(t, strings.HasPrefix(h.Provisional, "hashed_email:"), "%s: %+v", src, h)
			require.Zero(t, h.Line, "%s: the withheld identity is not in identities.jsonl", src)
			require.Empty(t, h.User, src)
		}
		if e.Expected != dump.ExpectOK {
			continue
		}
		require.Equal(t, audit.Missing, it.Status, src)
		require.NotEmpty(t, it.Holders, "%s: a resource that decrypts has holders", src)
		require.Equal(t, e.ResourceID, it.ResourceID, src)
		for _, h := range it.Holders {
			require.Positive(t, h.Line, "%s: every holder is an identity of identities.jsonl, named by its line", src)
			require.NotEqual(t, h.UserID == "", h.Provisional == "", "%s: a user or a provisional identity: %+v", src, h)
			if h.Provisional == "" {
				continue
			}
			sharedWithProvisional++
			// Named by its email, and by the hash of the public identity Tanker's SDKs share with.
			email, ok := strings.CutPrefix(h.User, "email:")
			require.True(t, ok, "%s: %+v", src, h)
			require.Equal(t, lines[h.Line-1].Email, email, src)
			require.Equal(t, "hashed_email:"+base64.StdEncoding.EncodeToString(identity.HashEmail(email)), h.Provisional, src)
			pub, err := identity.PublicIdentity(lines[h.Line-1].Identity)
			require.NoError(t, err)
			raw, err := base64.StdEncoding.DecodeString(pub)
			require.NoError(t, err)
			require.Contains(t, string(raw), `"value":"`+strings.TrimPrefix(h.Provisional, "hashed_email:")+`"`, src)
		}
		if strings.HasPrefix(e.File, "data/"+dump.ProvisionalOnlyName) {
			provisionalOnly++
			require.Len(t, it.Holders, 1, "%s: its key went to one provisional identity only", src)
			require.NotEmpty(t, it.Holders[0].Provisional, src)
		}
	}
	require.Equal(t, provOnly, provisionalOnly)
	require.Greater(t, sharedWithProvisional, provOnly, "ordinary resources are shared with unclaimed provisional identities too")
	var provisionalCounts int
	for _, u := range rep.MissingByUser {
		if u.Provisional != "" {
			provisionalCounts++
			require.Positive(t, u.Resources)
		}
	}
	require.Positive(t, provisionalCounts, "missing_by_user lists provisional identities")

	// Import exactly the identities the audit names: the first holder of each missing resource,
	// by its line in identities.jsonl.
	want := map[int]bool{}
	for src, e := range manifest {
		if e.Expected == dump.ExpectOK {
			want[items[src].Holders[0].Line] = true
		}
	}
	var ids []exitclient.Identity
	for line := range want {
		ids = append(ids, exitclient.Identity{Value: lines[line-1].Identity, Line: line})
	}
	_, err = in.Client.Import(context.Background(), ids, exitclient.ImportOptions{})
	require.NoError(t, err)
	require.Less(t, len(ids), len(lines), "fewer identities than the whole file suffice")

	rep, items = runAudit()
	for src, e := range manifest {
		if e.Expected == dump.ExpectOK {
			_, listed := items[src]
			require.False(t, listed, "%s is reachable after importing its holders", src)
		}
	}
	out := filepath.Join(t.TempDir(), "clear")
	_, err = tree.Decrypt(context.Background(), in.Client, filepath.Join(l.Dir, "data"), out, tree.Options{})
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
