package exitdb_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
	"github.com/idvault/idvault/exit/keys"
)

// The tests below run on a dump made by the project's generator (with
// decoy apps) and loaded by its loader, as an operator would.

func TestMain(m *testing.M) { dumptest.Main(m) }

// loaded is a generated dump loaded into a fresh database.
type loaded struct {
	dir        string
	dsn        string
	appID      []byte
	appSecret  []byte
	identities []dump.IdentityLine
	manifest   []dump.ManifestEntry
}

// loadGenerated loads dumptest's shared small dump (with decoy apps) into a fresh database.
func loadGenerated(t *testing.T) *loaded {
	t.Helper()
	d := dumptest.Shared(t)
	require.NotEmpty(t, d.App.DecoyIDs)
	return &loaded{dir: d.Dir, dsn: d.Load(t), appID: d.App.ID, appSecret: d.App.Secret,
		identities: d.Identities, manifest: d.Manifest}
}

func (l *loaded) open(t *testing.T) *exitdb.DB {
	t.Helper()
	db, err := exitdb.Open(t.Context(), exitdb.Config{DSN: l.dsn, AppID: l.appID})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

func (l *loaded) all() []string {
	out := make([]string, len(l.identities))
	for i, id := range l.identities {
		out[i] = id.Identity
	}
	return out
}

// decryptFile streams a manifest file through NewDecryptReader with the
// database's keys and returns the SHA-256 and size of the clear bytes.
func decryptFile(t *testing.T, db *exitdb.DB, path string) (string, int64, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := encryption.NewDecryptReader(f, db.KeyFinder(t.Context()))
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := r.WriteTo(h)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// checkManifest decrypts every manifest entry through db: ok entries to
// their SHA-256, negative ones failing with the error the manifest names.
func checkManifest(t *testing.T, l *loaded, db *exitdb.DB) {
	t.Helper()
	seen := map[string]int{}
	for _, e := range l.manifest {
		sum, n, err := decryptFile(t, db, filepath.Join(l.dir, e.File))
		seen[e.Expected]++
		switch e.Expected {
		case dump.ExpectOK:
			require.NoError(t, err, e.File)
			require.Equal(t, e.SHA256, sum, e.File)
			require.Equal(t, e.ClearSize, n, e.File)
		case dump.ExpectKeyNotFound:
			require.ErrorIs(t, err, encryption.ErrKeyNotFound, e.File)
			var nf *exitdb.KeyNotFoundError
			require.ErrorAs(t, err, &nf, e.File)
			if e.Creator == "" {
				require.Nil(t, nf.CreatorUserID, e.File)
			} else {
				require.Equal(t, identity.HashUserID(l.appID, e.Creator), nf.CreatorUserID, e.File)
				// Every identity of the dump is imported: its creator's too, so the keys were
				// given to others only (the withheld provisional identity).
				require.True(t, nf.CreatorImported, e.File)
			}
		case dump.ExpectDecryptionFailed:
			require.Error(t, err, e.File)
			require.True(t, errors.Is(err, encryption.ErrDecryptionFailed) || errors.Is(err, encryption.ErrBadPadding),
				"%s (%s): %v", e.File, e.Case, err)
			require.NotErrorIs(t, err, encryption.ErrTruncated, e.File)
			if e.Case == "stream_cut_before_final_chunk" {
				require.ErrorIs(t, err, encryption.ErrIncompleteStream, e.File)
			}
		case dump.ExpectTruncatedData:
			require.ErrorIs(t, err, encryption.ErrTruncated, e.File)
		case dump.ExpectUnsupportedFormat:
			require.ErrorIs(t, err, encryption.ErrUnknownFormat, e.File)
		default:
			t.Fatalf("%s: unknown expected outcome %q", e.File, e.Expected)
		}
	}
	for _, want := range []string{dump.ExpectOK, dump.ExpectKeyNotFound, dump.ExpectDecryptionFailed,
		dump.ExpectTruncatedData, dump.ExpectUnsupportedFormat} {
		require.Positive(t, seen[want], "no %s case in the manifest", want)
	}
}

// Every ok ciphertext decrypts to its SHA-256 through exitdb once
// identities.jsonl is imported; every negative case fails as the manifest
// says; a second instance on the same database sees the imports.
func TestGeneratedDump(t *testing.T) {
	t.Parallel()
	l := loadGenerated(t)
	one := l.open(t)
	two := l.open(t)

	// Before any import, ok resources are key_not_found.
	for _, e := range l.manifest {
		if e.Expected == dump.ExpectOK {
			_, _, err := decryptFile(t, two, filepath.Join(l.dir, e.File))
			require.ErrorIs(t, err, encryption.ErrKeyNotFound, e.File)
			break
		}
	}

	ids := l.all()
	total := 0
	for i := 0; i < len(ids); i += 10 {
		res, err := one.Import(t.Context(), ids[i:min(i+10, len(ids))])
		require.NoError(t, err)
		total += res.Imported
	}
	require.Equal(t, len(ids), total)
	res, err := two.Import(t.Context(), ids)
	require.NoError(t, err)
	require.Equal(t, exitdb.ImportResult{AlreadyImported: len(ids)}, res)

	checkManifest(t, l, two)
	checkManifest(t, l, one)
}

// Import failures are listed by index, and nothing of the batch is stored.
func TestGeneratedDumpImportFailures(t *testing.T) {
	t.Parallel()
	l := loadGenerated(t)
	var perm []dump.IdentityLine
	for _, id := range l.identities {
		if _, err := identity.ParsePermanent(id.Identity, l.appID, l.appSecret[32:]); err == nil {
			perm = append(perm, id)
		}
	}
	require.GreaterOrEqual(t, len(perm), 4)
	public, err := identity.PublicIdentity(perm[0].Identity)
	require.NoError(t, err)
	otherID, otherSecret, err := identity.GenerateApp(nil)
	require.NoError(t, err)
	otherApp, err := identity.CreatePermanent(otherID, otherSecret, perm[0].Email)
	require.NoError(t, err)
	stranger, err := identity.CreatePermanent(l.appID, l.appSecret, "nobody@nowhere.example")
	require.NoError(t, err)

	// perm[1] loses its stored verification key; perm[2]'s becomes
	// perm[3]'s verification key, encrypted under perm[2]'s user secret.
	conn, err := pgx.Connect(t.Context(), l.dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	p1, _ := identity.ParsePermanent(perm[1].Identity, l.appID, l.appSecret[32:])
	p2, _ := identity.ParsePermanent(perm[2].Identity, l.appID, l.appSecret[32:])
	p3, _ := identity.ParsePermanent(perm[3].Identity, l.appID, l.appSecret[32:])
	_, err = conn.Exec(t.Context(), `UPDATE users SET encrypted_verification_key_for_user_secret = NULL
		WHERE trustchain_id = $1 AND user_id = $2`, l.appID, p1.UserID)
	require.NoError(t, err)
	var enc3 []byte
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT encrypted_verification_key_for_user_secret FROM users
		WHERE trustchain_id = $1 AND user_id = $2`, l.appID, p3.UserID).Scan(&enc3))
	vk3, err := keys.DecryptVerificationKey(enc3, p3.UserSecret)
	require.NoError(t, err)
	mismatch, err := keys.EncryptVerificationKey(vk3, p2.UserSecret, nil)
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), `UPDATE users SET encrypted_verification_key_for_user_secret = $3
		WHERE trustchain_id = $1 AND user_id = $2`, l.appID, p2.UserID, mismatch)
	require.NoError(t, err)

	db := l.open(t)
	batch := []string{perm[0].Identity, public, otherApp, stranger, perm[1].Identity, perm[2].Identity, perm[3].Identity}
	_, err = db.Import(t.Context(), batch)
	var ie *exitdb.ImportError
	require.ErrorAs(t, err, &ie)
	want := []struct {
		index  int
		reason string
	}{
		{1, "a public identity"},
		{2, "another app"},
		{3, "not in the dump"},
		{4, "no verification key"},
		{5, "matches no ghost device"},
	}
	require.Len(t, ie.Entries, len(want))
	for i, w := range want {
		require.Equal(t, w.index, ie.Entries[i].Index)
		require.Contains(t, ie.Entries[i].Reason, w.reason)
		require.NotContains(t, ie.Entries[i].Reason, batch[w.index])
	}
	require.Zero(t, count(t, l.dsn, "exit_identities"), "nothing of the batch is stored")

	// The good entries alone import.
	res, err := db.Import(t.Context(), []string{perm[0].Identity, perm[3].Identity})
	require.NoError(t, err)
	require.Equal(t, 2, res.Imported)
}
