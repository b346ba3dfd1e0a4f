package exitdb_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/chain/chaintest"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// fixture is a database holding a World's dump (and a decoy app's).
type fixture struct {
	*chaintest.World
	t     *testing.T
	dsn   string
	decoy *chaintest.World
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dsn := newDSN(t)
	createDumpSchema(t, dsn)
	f := &fixture{World: chaintest.NewWorld(t), t: t, dsn: dsn, decoy: chaintest.NewWorld(t)}
	return f
}

// load writes the World's and the decoy's rows.
func (f *fixture) load() {
	load(f.t, f.dsn, &f.Dump)
	load(f.t, f.dsn, &f.decoy.Dump)
}

func (f *fixture) open(cfg exitdb.Config) *exitdb.DB {
	f.t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = f.dsn
	}
	cfg.AppID = f.AppID
	db, err := exitdb.Open(f.t.Context(), cfg)
	require.NoError(f.t, err)
	f.t.Cleanup(db.Close)
	return db
}

func decrypt(t *testing.T, db *exitdb.DB, enc []byte) ([]byte, error) {
	t.Helper()
	out, _, err := encryption.Decrypt(db.KeyFinder(t.Context()), enc)
	return out, err
}

func count(t *testing.T, dsn, table string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestOpenChecksTheDump(t *testing.T) {
	t.Parallel()
	appID := make([]byte, 32)
	empty := newDSN(t)
	_, err := exitdb.Open(t.Context(), exitdb.Config{DSN: empty, AppID: appID})
	var se *exitdb.SchemaError
	require.ErrorAs(t, err, &se)
	require.Len(t, se.Missing, 9)
	require.Contains(t, se.Missing, "table key_publishes")

	f := newFixture(t)
	_, err = exitdb.Open(t.Context(), exitdb.Config{DSN: f.dsn, AppID: f.AppID})
	require.ErrorAs(t, err, &se)
	require.Equal(t, []string{"trustchains row for app " + base64.StdEncoding.EncodeToString(f.AppID)}, se.Missing)

	// A root block that is not the app's.
	f.load()
	_, err = exitdb.Open(t.Context(), exitdb.Config{DSN: f.dsn, AppID: f.AppID})
	require.NoError(t, err)
	conn, err := pgx.Connect(t.Context(), f.dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `UPDATE trustchains SET root_block = $1 WHERE id = $2`, f.decoy.Dump.RootBlock, f.AppID)
	require.NoError(t, err)
	_, err = exitdb.Open(t.Context(), exitdb.Config{DSN: f.dsn, AppID: f.AppID})
	require.ErrorContains(t, err, "inconsistent")
}

func TestOpenConnectionErrors(t *testing.T) {
	t.Parallel()
	appID := make([]byte, 32)
	_, err := exitdb.Open(t.Context(), exitdb.Config{DSN: "postgres://u:s3cret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", AppID: appID})
	require.ErrorIs(t, err, exitdb.ErrUnavailable)
	require.NotContains(t, err.Error(), "s3cret")

	_, err = exitdb.Open(t.Context(), exitdb.Config{DSN: "postgres://u:s3cret@[bad", AppID: appID})
	require.Error(t, err)
	require.NotErrorIs(t, err, exitdb.ErrUnavailable)
	require.NotContains(t, err.Error(), "s3cret")
}

// Several instances starting at once on a fresh database all succeed.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.load()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := exitdb.Open(t.Context(), exitdb.Config{DSN: f.dsn, AppID: f.AppID, MaxConns: 2})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

func TestImportAndDecrypt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	bob := f.User("bob", true)
	carol := f.User("carol", true)
	claimed := f.Provisional("claimed@example.com")
	f.Claim(carol, claimed)
	unclaimed := f.Provisional("unclaimed@example.com")
	g := f.Group(alice, []*chaintest.User{bob}, []*chaintest.Provisional{unclaimed})
	type res struct {
		enc  []byte
		want string
	}
	resources := []res{
		{f.Resource(encryption.V10, []byte("to bob"), alice, bob), "to bob"},
		{f.Resource(encryption.V11, []byte("to the group"), alice, g), "to the group"},
		{f.Resource(encryption.V7, []byte("to the claimed"), alice, claimed), "to the claimed"},
		{f.Resource(encryption.V2, []byte("to the unclaimed"), alice, unclaimed), "to the unclaimed"},
	}
	notShared := f.Resource(encryption.V9, []byte("alice only"), alice)
	// The decoy app has the same user names; its rows must never be used.
	decoyAlice := f.decoy.User("alice", true)
	f.load()

	db := f.open(exitdb.Config{})
	for _, r := range resources {
		_, err := decrypt(t, db, r.enc)
		var nf *exitdb.KeyNotFoundError
		require.ErrorAs(t, err, &nf)
		require.Equal(t, alice.UserID, nf.CreatorUserID)
	}

	got, err := db.Import(t.Context(), []string{bob.Identity, carol.Identity, unclaimed.Identity})
	require.NoError(t, err)
	require.Equal(t, exitdb.ImportResult{Imported: 3}, got)
	for _, r := range resources {
		out, err := decrypt(t, db, r.enc)
		require.NoError(t, err)
		require.Equal(t, r.want, string(out))
	}
	_, err = decrypt(t, db, notShared)
	var nf *exitdb.KeyNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, alice.UserID, nf.CreatorUserID)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	// Re-importing is harmless; the same identity twice in a batch too.
	got, err = db.Import(t.Context(), []string{bob.Identity, alice.Identity, alice.Identity})
	require.NoError(t, err)
	require.Equal(t, exitdb.ImportResult{Imported: 1, AlreadyImported: 2}, got)
	out, err := decrypt(t, db, notShared)
	require.NoError(t, err, "not-found results are not cached")
	require.Equal(t, "alice only", string(out))

	// The decoy app's identity is another app's.
	_, err = db.Import(t.Context(), []string{decoyAlice.Identity})
	var ie *exitdb.ImportError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, []exitdb.EntryError{{Index: 0, Reason: "an identity of another app"}}, ie.Entries)
}

func TestImportAllOrNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	noVK := f.User("no vk", true)
	f.SetVerificationKey(noVK, nil)
	stranger, err := identity.CreatePermanent(f.AppID, f.AppSecret, "stranger")
	require.NoError(t, err)
	public, err := identity.PublicIdentity(alice.Identity)
	require.NoError(t, err)
	f.load()
	db := f.open(exitdb.Config{})

	batch := []string{alice.Identity, "garbage", public, stranger, noVK.Identity}
	_, err = db.Import(t.Context(), batch)
	var ie *exitdb.ImportError
	require.ErrorAs(t, err, &ie)
	require.Len(t, ie.Entries, 4)
	for i, e := range ie.Entries {
		require.Equal(t, i+1, e.Index)
		require.NotContains(t, e.Reason, batch[e.Index])
	}
	require.Contains(t, ie.Entries[2].Reason, "not in the dump")
	require.Contains(t, ie.Entries[3].Reason, "no verification key")
	for _, s := range batch {
		require.NotContains(t, err.Error(), s)
	}
	require.Zero(t, count(t, f.dsn, "exit_identities"), "nothing stored")
	require.Zero(t, count(t, f.dsn, "exit_user_keys"), "nothing stored")
}

// An identity imported through one instance decrypts through another, and
// concurrent imports of the same identities through two pools succeed.
func TestInstancesShareImports(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	users := make([]*chaintest.User, 20)
	var batch []string
	for i := range users {
		users[i] = f.User(strings.Repeat("u", i+1), true)
		batch = append(batch, users[i].Identity)
	}
	enc := f.Resource(encryption.V10, []byte("for the last user"), users[0], users[19])
	f.load()
	one := f.open(exitdb.Config{MaxConns: 4})
	two := f.open(exitdb.Config{MaxConns: 4})

	var wg sync.WaitGroup
	results := make([]exitdb.ImportResult, 4)
	errs := make([]error, 4)
	for i := range 4 {
		db := one
		if i%2 == 1 {
			db = two
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := batch
			if i >= 2 { // another order: no deadlock either
				b = append([]string(nil), batch...)
				for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
					b[l], b[r] = b[r], b[l]
				}
			}
			results[i], errs[i] = db.Import(t.Context(), b)
		}()
	}
	wg.Wait()
	imported := 0
	for i := range 4 {
		require.NoError(t, errs[i])
		require.Equal(t, len(batch), results[i].Imported+results[i].AlreadyImported)
		imported += results[i].Imported
	}
	require.Equal(t, len(batch), imported, "each identity counted once as new")

	for _, db := range []*exitdb.DB{one, two} {
		out, err := decrypt(t, db, enc)
		require.NoError(t, err)
		require.Equal(t, "for the last user", string(out))
	}
}

// A database that goes away gives ErrUnavailable, and the same DB works
// again once it is back.
func TestUnavailableAndRecovery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	enc := f.Resource(encryption.V10, []byte("after the outage"), alice)
	f.load()
	cfg, err := pgx.ParseConfig(f.dsn)
	require.NoError(t, err)
	px := newProxy(t, cfg.Host+":"+itoa(int(cfg.Port)))
	dsn := "postgres://" + cfg.User + "@" + px.addr + "/" + cfg.Database + "?sslmode=disable&connect_timeout=2"
	db := f.open(exitdb.Config{DSN: dsn})
	require.NoError(t, db.Ping(t.Context()))

	px.cut()
	require.ErrorIs(t, db.Ping(t.Context()), exitdb.ErrUnavailable)
	_, err = db.Import(t.Context(), []string{alice.Identity})
	require.ErrorIs(t, err, exitdb.ErrUnavailable)
	var ie *exitdb.ImportError
	require.False(t, errors.As(err, &ie), "an outage is not an identity's fault")
	_, err = decrypt(t, db, enc)
	require.ErrorIs(t, err, exitdb.ErrUnavailable)
	require.NotErrorIs(t, err, encryption.ErrKeyNotFound)

	px.restore()
	require.NoError(t, db.Ping(t.Context()))
	_, err = db.Import(t.Context(), []string{alice.Identity})
	require.NoError(t, err)
	out, err := decrypt(t, db, enc)
	require.NoError(t, err)
	require.Equal(t, "after the outage", string(out))
}

// Resolved keys are cached up to the configured size: a cached key
// resolves without the database.
func TestKeyCacheBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	var encs [][]byte
	for range 3 {
		encs = append(encs, f.Resource(encryption.V5, []byte("cached"), alice))
	}
	f.load()
	cfg, err := pgx.ParseConfig(f.dsn)
	require.NoError(t, err)
	px := newProxy(t, cfg.Host+":"+itoa(int(cfg.Port)))
	dsn := "postgres://" + cfg.User + "@" + px.addr + "/" + cfg.Database + "?sslmode=disable&connect_timeout=2"
	db := f.open(exitdb.Config{DSN: dsn, KeyCacheSize: 2})
	_, err = db.Import(t.Context(), []string{alice.Identity})
	require.NoError(t, err)
	for _, enc := range encs {
		_, err := decrypt(t, db, enc)
		require.NoError(t, err)
	}
	px.cut()
	// The two most recent keys are cached, the first was evicted.
	for _, enc := range encs[1:] {
		_, err := decrypt(t, db, enc)
		require.NoError(t, err)
	}
	_, err = decrypt(t, db, encs[0])
	require.ErrorIs(t, err, exitdb.ErrUnavailable)
}
