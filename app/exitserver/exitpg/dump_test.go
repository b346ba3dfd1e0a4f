package exitpg_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
)

// A generated dump with decoy apps: identities imported through one instance, then every
// manifest entry decrypted through another instance on the same database: ok entries to their
// SHA-256, negative cases to their error code. Concurrent imports of the same identities
// through both instances both succeed.
func TestDumpThroughTwoInstances(t *testing.T) {
	t.Parallel()
	l := exitpgtest.LoadDump(t, gen.Options{Users: 24, Groups: 6, Resources: 60, Big: 1, DecoyApps: 2, Seed: 10})
	a, b := exitpgtest.Serve(t, l, 0), exitpgtest.Serve(t, l, 0)
	ids := exitpgtest.Identities(t, l.Dir)
	require.NotEmpty(t, ids)
	userIDs := userIDsByEmail(t, l)

	// Before any import, key_not_found names the creator: importing that user decrypts it.
	for _, e := range l.Manifest {
		if e.Expected == dump.ExpectOK {
			_, code, msg := b.DecryptMsg(t, filepath.Join(l.Dir, e.File))
			require.Equal(t, dump.ExpectKeyNotFound, code)
			require.Contains(t, msg, "import the identity of user "+userIDs[e.Creator], e.File)
			break
		}
	}

	// The first identities through both instances at once.
	first := ids[:min(8, len(ids))]
	var wg sync.WaitGroup
	sums := make([]exitclient.ImportSummary, 2)
	errs := make([]error, 2)
	for i, in := range []*exitpgtest.Instance{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = in.Client.Import(context.Background(), first, exitclient.ImportOptions{Batch: 4})
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Empty(t, sums[0].Refused)
	require.Empty(t, sums[1].Refused)
	require.Equal(t, len(first), sums[0].Imported+sums[1].Imported, "each identity stored once across both instances")
	require.Equal(t, 2*len(first), sums[0].Imported+sums[0].AlreadyImported+sums[1].Imported+sums[1].AlreadyImported)

	sum, err := a.Client.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 500})
	require.NoError(t, err)
	require.Empty(t, sum.Refused, "gen-dump's identities.jsonl imports as is")
	require.Equal(t, len(ids), sum.Imported+sum.AlreadyImported)

	counts := map[string]int{}
	unnamed := 0
	for _, e := range l.Manifest {
		status, got, msg := b.DecryptMsg(t, filepath.Join(l.Dir, e.File))
		if e.Expected == dump.ExpectOK {
			require.Equal(t, 200, status, "%s: %s", e.File, got)
			require.Equal(t, e.SHA256, got, "%s decrypts to its SHA-256", e.File)
		} else {
			require.Equal(t, e.Expected, got, "%s (%s)", e.File, e.Case)
		}
		if e.Expected == dump.ExpectKeyNotFound && userIDs[e.Creator] != "" {
			// The creator is imported (every identity is): naming them would send the operator
			// to import an identity already there.
			require.NotContains(t, msg, userIDs[e.Creator], "%s: key_not_found names an imported creator", e.File)
			unnamed++
		}
		counts[e.Expected]++
	}
	require.Positive(t, unnamed, "some key_not_found case has a known, imported creator")
	t.Logf("manifest outcomes: %v", counts)
	require.Greater(t, counts[dump.ExpectOK], 60)
	for _, code := range []string{dump.ExpectDecryptionFailed, dump.ExpectTruncatedData, dump.ExpectUnsupportedFormat, dump.ExpectKeyNotFound} {
		require.Positive(t, counts[code], "the dump has %s cases", code)
	}

	// The bulk client mirrors the dump's data directory through the second instance.
	out := filepath.Join(t.TempDir(), "clear")
	rep, err := tree.Decrypt(context.Background(), b.Client, filepath.Join(l.Dir, "data"), out, tree.Options{Jobs: 3})
	require.NoError(t, err)
	failed := map[string]string{}
	for _, f := range rep.Failures {
		failed["data/"+filepath.ToSlash(f.File)] = f.Code
	}
	for _, e := range l.Manifest {
		if e.Expected == dump.ExpectOK {
			require.NotContains(t, failed, e.File)
			continue
		}
		code := failed[e.File]
		if code == "stream_aborted" { // a stream failing past its first chunk cannot carry a code
			require.Equal(t, dump.ExpectDecryptionFailed, e.Expected, e.File)
			continue
		}
		require.Equal(t, e.Expected, code, e.File)
	}
	require.Equal(t, counts[dump.ExpectOK], rep.Decrypted)
}

// userIDsByEmail maps each email of identities.jsonl to the base64 user ID of its permanent
// identity (the identity's "value").
func userIDsByEmail(t *testing.T, l *exitpgtest.Loaded) map[string]string {
	t.Helper()
	lines, err := dump.ReadIdentities(l.Dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range lines {
		dec, err := base64.StdEncoding.DecodeString(e.Identity)
		require.NoError(t, err)
		var id struct {
			Target string `json:"target"`
			Value  string `json:"value"`
		}
		require.NoError(t, json.Unmarshal(dec, &id))
		if id.Target == "user" {
			out[e.Email] = id.Value
		}
	}
	return out
}
