package directory_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/store"
)

func pub(t *testing.T, private string) string {
	t.Helper()
	p, err := identity.PublicIdentity(private)
	require.NoError(t, err)
	return p
}

func newApp(t *testing.T) (*directory.Directory, apps.App) {
	t.Helper()
	env := apptest.New(t)
	return env.Dir, env.CreateApp(t, true).App
}

// The two policies differ only for a permanent, unregistered identity: fake authentication
// answers with it when there is no provisional identity; the identity server creates one.
func TestPolicies(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	r, err := d.Permanent(a, "p@example.com")
	require.NoError(t, err)

	got, err := d.PublicIdentity(a, "p@example.com", directory.FakeAuthPolicy)
	require.NoError(t, err)
	require.Equal(t, pub(t, r.PermanentIdentity), got, "fake auth: permanent, no provisional")

	got, err = d.PublicIdentity(a, "p@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)
	after, err := d.Lookup(a, "p@example.com")
	require.NoError(t, err)
	require.NotEmpty(t, after.ProvisionalIdentity, "identity server: provisional created beside")
	require.Equal(t, r.PermanentIdentity, after.PermanentIdentity, "permanent kept")
	require.Equal(t, pub(t, after.ProvisionalIdentity), got)

	got, err = d.PublicIdentity(a, "p@example.com", directory.FakeAuthPolicy)
	require.NoError(t, err)
	require.Equal(t, pub(t, after.ProvisionalIdentity), got, "fake auth: provisional exists, unregistered")

	_, err = d.Register(a, "p@example.com")
	require.NoError(t, err)
	for _, p := range []directory.Policy{directory.FakeAuthPolicy, directory.IdentityServerPolicy} {
		got, err = d.PublicIdentity(a, "p@example.com", p)
		require.NoError(t, err)
		require.Equal(t, pub(t, r.PermanentIdentity), got, "registered: permanent")
	}
}

func TestRegisterNeedsPermanentIdentity(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	_, err := d.Register(a, "nobody@example.com")
	require.ErrorIs(t, err, directory.ErrUnknownUser)
	_, err = d.Lookup(a, "nobody@example.com")
	require.ErrorIs(t, err, directory.ErrUnknownUser, "no record was created")

	_, err = d.PublicIdentity(a, "prov@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)
	_, err = d.Register(a, "prov@example.com")
	require.ErrorIs(t, err, directory.ErrUnknownUser, "a provisional identity is not a user")
	r, err := d.Permanent(a, "prov@example.com")
	require.NoError(t, err)
	require.False(t, r.Registered)
	require.NotEmpty(t, r.ProvisionalIdentity)
}

func TestPublicIdentitiesBatch(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	known, err := d.Permanent(a, "known@example.com")
	require.NoError(t, err)
	prov, err := d.PublicIdentity(a, "prov@example.com", directory.FakeAuthPolicy)
	require.NoError(t, err)

	emails := []string{"new1@example.com", "known@example.com", "new2@example.com", "new1@example.com", "prov@example.com"}
	got, err := d.PublicIdentities(a, emails, directory.FakeAuthPolicy)
	require.NoError(t, err)
	require.Len(t, got, len(emails))
	require.Equal(t, pub(t, known.PermanentIdentity), got[1])
	require.Equal(t, got[0], got[3], "repeated email, same identity")
	require.NotEqual(t, got[0], got[2])
	require.Equal(t, prov, got[4])
	for _, i := range []int{0, 2} {
		r, err := d.Lookup(a, emails[i])
		require.NoError(t, err)
		require.Equal(t, pub(t, r.ProvisionalIdentity), got[i], "stored")
		p, err := identity.ParseProvisional(r.ProvisionalIdentity, a.ID)
		require.NoError(t, err)
		require.Equal(t, emails[i], p.Value)
	}
	again, err := d.PublicIdentities(a, emails, directory.FakeAuthPolicy)
	require.NoError(t, err)
	require.Equal(t, got, again)
}

// Batches and single requests racing on the same new emails agree on one identity each.
func TestPublicIdentitiesConcurrent(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	emails := make([]string, 20)
	for i := range emails {
		emails[i] = fmt.Sprintf("c%d@example.com", i)
	}
	const n = 8
	results := make([][]string, n)
	singles := make([]string, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			r, err := d.PublicIdentities(a, emails, directory.IdentityServerPolicy)
			if err == nil {
				results[g] = r
			}
		})
		wg.Go(func() {
			p, err := d.PublicIdentity(a, emails[g], directory.IdentityServerPolicy)
			if err == nil {
				singles[g] = p
			}
		})
	}
	wg.Wait()
	for g := range n {
		require.Equal(t, results[0], results[g])
		require.Equal(t, results[0][g], singles[g])
	}
}

// New identities are stored with their public identities, so reads need not derive them.
func TestPublicIdentitiesAreStoredAtCreation(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, true).App
	r, err := env.Dir.Permanent(a, "perm@example.com")
	require.NoError(t, err)
	got, err := env.Dir.PublicIdentity(a, "prov@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)

	stored, err := env.Store.Record(a.ID, "perm@example.com")
	require.NoError(t, err)
	require.Equal(t, pub(t, r.PermanentIdentity), stored.PublicPermanent)
	stored, err = env.Store.Record(a.ID, "prov@example.com")
	require.NoError(t, err)
	require.Equal(t, pub(t, stored.ProvisionalIdentity), stored.PublicProvisional)
	require.Equal(t, got, stored.PublicProvisional)
}

// A record stored before public identities were kept (here: identities without them) is
// answered with the derived public identity, which is then stored (derive and cache).
func TestRecordsWithoutPublicIdentitiesAreDerivedAndCached(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, true).App
	perm, err := identity.CreatePermanent(a.ID, a.Secret, "old-user")
	require.NoError(t, err)
	prov, err := identity.CreateProvisional(a.ID, identity.TargetEmail, "both@example.com")
	require.NoError(t, err)
	for email, ids := range map[string][2]string{"perm@example.com": {perm, ""}, "both@example.com": {perm, prov}} {
		_, err := env.Store.UpdateRecord(a.ID, email, func(r *store.Record, _ bool) (bool, error) {
			r.UserID, r.PermanentIdentity, r.ProvisionalIdentity = "old-user", ids[0], ids[1]
			return true, nil
		})
		require.NoError(t, err)
	}

	got, err := env.Dir.PublicIdentities(a, []string{"perm@example.com", "both@example.com", "perm@example.com"}, directory.FakeAuthPolicy)
	require.NoError(t, err)
	require.Equal(t, []string{pub(t, perm), pub(t, prov), pub(t, perm)}, got)

	for email, want := range map[string][2]string{"perm@example.com": {pub(t, perm), ""}, "both@example.com": {pub(t, perm), pub(t, prov)}} {
		r, err := env.Store.Record(a.ID, email)
		require.NoError(t, err)
		require.Equal(t, want[0], r.PublicPermanent, "%s: public permanent identity stored", email)
		require.Equal(t, want[1], r.PublicProvisional, "%s: public provisional identity stored", email)
		require.Equal(t, "old-user", r.UserID, "%s: the rest of the record unchanged", email)
	}
}

// The app's secret is checked once per app and kept, but a cached check never vouches for
// another secret: an app whose stored secret no longer derives its public key is refused even
// after identities were created with the good one, and the good one still works afterwards.
func TestPermanentChecksTheSecretItIsGiven(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	r, err := d.Permanent(a, "first@example.com")
	require.NoError(t, err)
	p, err := identity.ParsePermanent(r.PermanentIdentity, a.ID, a.Secret[32:])
	require.NoError(t, err, "the delegation is signed by the app's key")
	require.NoError(t, p.CheckUserID(r.UserID))
	require.Equal(t, pub(t, r.PermanentIdentity), r.PublicPermanent, "the stored public identity is the derived one")

	bad := a
	bad.Secret = append([]byte(nil), a.Secret...)
	bad.Secret[0] ^= 1
	_, err = d.Permanent(bad, "second@example.com")
	require.ErrorIs(t, err, identity.ErrInvalidAppSecret)
	_, err = d.Lookup(a, "second@example.com")
	require.ErrorIs(t, err, directory.ErrUnknownUser, "nothing stored")

	_, err = d.Permanent(a, "third@example.com")
	require.NoError(t, err)
}

// A known email never costs a key generation: once an email has its identities, asking again
// (for the permanent identity, or for the public identity it is shared with) takes nothing
// from the key pool and makes no key on the request's path.
func TestKnownEmailMakesNoKeys(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	_, err := d.Permanent(a, "known@example.com")
	require.NoError(t, err)
	_, err = d.PublicIdentity(a, "known@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)
	_, err = d.PublicIdentity(a, "provisional@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)
	before := d.KeyPoolStats()
	require.Equal(t, int64(3), before.Taken+before.Missed, "each creation counted")

	for range 10 {
		_, err = d.Permanent(a, "known@example.com")
		require.NoError(t, err)
		_, err = d.PublicIdentity(a, "known@example.com", directory.IdentityServerPolicy)
		require.NoError(t, err)
		_, err = d.PublicIdentity(a, "provisional@example.com", directory.IdentityServerPolicy)
		require.NoError(t, err)
		_, err = d.PublicIdentities(a, []string{"known@example.com", "provisional@example.com"}, directory.FakeAuthPolicy)
		require.NoError(t, err)
	}
	after := d.KeyPoolStats()
	require.Equal(t, before.Taken, after.Taken)
	require.Equal(t, before.Missed, after.Missed)
}

// New identities come from the directory's key pool once it is warm, and a closed directory
// still creates them (on the request's path).
func TestNewIdentitiesUseTheKeyPool(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	_, err := d.Permanent(a, "first@example.com")
	require.NoError(t, err)
	for range 20000 { // a bounded wait for the background filler
		if d.KeyPoolStats().Ready >= 5 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	before := d.KeyPoolStats()
	for i := range 5 {
		r, err := d.Permanent(a, fmt.Sprintf("user%d@example.com", i))
		require.NoError(t, err)
		p, err := identity.ParsePermanent(r.PermanentIdentity, a.ID, a.Secret[32:])
		require.NoError(t, err)
		require.NoError(t, p.CheckUserID(r.UserID), "the stored user ID is the one the identity hashes")
	}
	require.Equal(t, before.Taken+5, d.KeyPoolStats().Taken, "all five made ahead of time")

	d.Close()
	r, err := d.Permanent(a, "after-close@example.com")
	require.NoError(t, err)
	require.NotEmpty(t, r.PermanentIdentity)
	_, err = d.PublicIdentity(a, "after-close-provisional@example.com", directory.IdentityServerPolicy)
	require.NoError(t, err)
}

// Deleting an app wipes the identities the key pool made ahead of time with its secret (they
// stayed in memory until a restart), and a request that found the app before the deletion gets
// nothing from the pool and starts no queue for it.
func TestDeletedAppLeavesNoIdentityMadeAhead(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, true).App
	_, err := env.Dir.Permanent(a, "first@example.com")
	require.NoError(t, err)
	for i := 0; env.Dir.KeyPoolStats().Ready == 0; i++ {
		require.Less(t, i, 20000, "the pool never made an identity ahead of time")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, env.Apps.Delete(a.ID))
	require.Zero(t, env.Dir.KeyPoolStats().Ready, "the deleted app's identities made ahead of time are wiped")

	_, err = env.Dir.Permanent(a, "late@example.com") // the app as a request found it before
	require.Error(t, err, "nothing is written for a deleted app")
	require.Zero(t, env.Dir.KeyPoolStats().Ready)
}

// PublicIdentityNew reports whether it created the email's record, from its own write: of
// concurrent requests for a new email exactly one reports the creation, all answer the same
// identity; an email with a record is not a creation, even when its provisional identity is
// added beside a permanent one. Not allowed to create, it refuses a new email with
// ErrNoNewRecord and writes nothing, while answering emails that have a record.
func TestPublicIdentityNewReportsCreation(t *testing.T) {
	t.Parallel()
	d, a := newApp(t)
	const n = 8
	pubs := make([]string, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			pubs[i], created[i], err = d.PublicIdentityNew(a, "new@example.com", directory.IdentityServerPolicy, true)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	count := 0
	for i := range n {
		require.Equal(t, pubs[0], pubs[i], "one identity per email")
		if created[i] {
			count++
		}
	}
	require.Equal(t, 1, count, "one creation reported")

	got, isNew, err := d.PublicIdentityNew(a, "new@example.com", directory.IdentityServerPolicy, false)
	require.NoError(t, err)
	require.False(t, isNew)
	require.Equal(t, pubs[0], got)

	r, err := d.Permanent(a, "perm@example.com")
	require.NoError(t, err)
	got, isNew, err = d.PublicIdentityNew(a, "perm@example.com", directory.IdentityServerPolicy, false)
	require.NoError(t, err, "a record with a permanent identity gets its provisional one")
	require.False(t, isNew)
	after, err := d.Lookup(a, "perm@example.com")
	require.NoError(t, err)
	require.Equal(t, r.UserID, after.UserID)
	require.Equal(t, pub(t, after.ProvisionalIdentity), got)

	_, isNew, err = d.PublicIdentityNew(a, "refused@example.com", directory.IdentityServerPolicy, false)
	require.ErrorIs(t, err, directory.ErrNoNewRecord)
	require.False(t, isNew)
	_, err = d.Lookup(a, "refused@example.com")
	require.ErrorIs(t, err, directory.ErrUnknownUser, "nothing written")
}
