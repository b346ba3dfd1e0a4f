package store

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func newKey(t testing.TB) *MasterKey {
	raw := make([]byte, MasterKeySize)
	_, _ = rand.Read(raw)
	mk, err := NewMasterKey(raw)
	require.NoError(t, err)
	return mk
}

func openTemp(t testing.TB, mk *MasterKey) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, path
}

func testApp(id byte) App {
	secret := bytes.Repeat([]byte{0xAB, id}, 32)
	return App{ID: bytes.Repeat([]byte{id}, 32), Name: fmt.Sprintf("app-%d", id), Secret: secret, AuthTokenHash: bytes.Repeat([]byte{1}, 32), Test: true}
}

func TestAppsRoundTripAndPersist(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	path := filepath.Join(t.TempDir(), "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	a := testApp(7)
	a.Options = AppOptions{LegacyErrors: true}
	require.NoError(t, s.CreateApp(a))
	require.ErrorIs(t, s.CreateApp(a), ErrExists)
	require.NoError(t, s.Close())

	s, err = Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	got, err := s.App(a.ID)
	require.NoError(t, err)
	require.Equal(t, a.Secret, got.Secret)
	require.Equal(t, a.AuthTokenHash, got.AuthTokenHash)
	require.True(t, got.Options.LegacyErrors)
	require.False(t, got.CreatedAt.IsZero())

	_, err = s.App(bytes.Repeat([]byte{9}, 32))
	require.ErrorIs(t, err, ErrNotFound)
}

func TestSecretsAreSealedOnDisk(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	a := testApp(3)
	require.NoError(t, s.CreateApp(a))
	const ident = "eyJ0cnVzdGNoYWluX2lkIjoiUFJJVkFURS1JREVOVElUWS1NQVJLRVIifQ=="
	_, err := s.UpdateRecord(a.ID, "alice@example.com", func(r *Record, _ bool) (bool, error) {
		r.PermanentIdentity, r.ProvisionalIdentity = ident, ident+"prov"
		r.PublicPermanent, r.PublicProvisional = ident+"pub", ident+"pubprov"
		return true, nil
	})
	require.NoError(t, err)
	var backup bytes.Buffer
	_, err = s.Backup(&backup)
	require.NoError(t, err)
	disk, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, blob := range map[string][]byte{"data file": disk, "backup": backup.Bytes()} {
		require.False(t, bytes.Contains(blob, a.Secret), "%s holds the app secret in clear", name)
		require.False(t, bytes.Contains(blob, []byte(ident)), "%s holds an identity in clear", name)
		require.True(t, bytes.Contains(blob, []byte("alice@example.com")), "%s keys records by email", name)
	}
}

// A value sealed under one master key does not open under another (Open refuses such a pair
// first: keycheck_test.go).
func TestWrongMasterKeyCannotReadSecrets(t *testing.T) {
	t.Parallel()
	one, err := newSealer(newKey(t))
	require.NoError(t, err)
	other, err := newSealer(newKey(t))
	require.NoError(t, err)
	ad := adFor(bucketApps, testApp(4).ID, "secret")
	sealed, err := one.seal(testApp(4).Secret, ad)
	require.NoError(t, err)
	_, err = other.open(sealed, ad)
	require.ErrorIs(t, err, ErrSealed)
	clear, err := one.open(sealed, ad)
	require.NoError(t, err)
	require.Equal(t, testApp(4).Secret, clear)
}

func TestSealedValueBoundToItsRecord(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	a := testApp(5)
	for _, email := range []string{"a@x.io", "b@x.io"} {
		_, err := s.UpdateRecord(a.ID, email, func(r *Record, _ bool) (bool, error) {
			r.PermanentIdentity = "identity-of-" + email
			return true, nil
		})
		require.NoError(t, err)
	}
	// Copy a's stored value over b's: the sealed identity must not open under b's key.
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		return b.Put(recordKey(a.ID, "b@x.io"), append([]byte(nil), b.Get(recordKey(a.ID, "a@x.io"))...))
	}))
	_, err := s.Record(a.ID, "b@x.io")
	require.ErrorIs(t, err, ErrSealed)
}

func TestSecondProcessFailsFastOnLock(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	_, path := openTemp(t, mk)
	start := time.Now()
	_, err := Open(Options{Path: path, MasterKey: mk, LockTimeout: 100 * time.Millisecond})
	require.ErrorIs(t, err, ErrLocked)
	require.Contains(t, err.Error(), path)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestUpdateRecordCreatesExactlyOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	appID := bytes.Repeat([]byte{6}, 32)
	var wg sync.WaitGroup
	results := make([]Record, 32)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := s.UpdateRecord(appID, "new@x.io", func(r *Record, exists bool) (bool, error) {
				if r.UserID != "" {
					return false, nil
				}
				r.UserID = string(rune('A' + i))
				return true, nil
			})
			require.NoError(t, err)
			results[i] = r
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		require.Equal(t, results[0].UserID, r.UserID)
	}
}

func TestDeleteAppRemovesItsRecordsOnly(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	a, b := testApp(1), testApp(2)
	require.NoError(t, s.CreateApp(a))
	require.NoError(t, s.CreateApp(b))
	for _, app := range []App{a, b} {
		for _, e := range []string{"x@y.io", "z@y.io"} {
			_, err := s.UpdateRecord(app.ID, e, func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.DeleteApp(a.ID))
	require.ErrorIs(t, s.DeleteApp(a.ID), ErrNotFound)
	n, err := s.CountRecords(a.ID)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.CountRecords(b.ID)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

// A hot copy is a data file of its own, opened with the same master key.
func TestBackupOpensWithSameKey(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, _ := openTemp(t, mk)
	a := testApp(8)
	require.NoError(t, s.CreateApp(a))
	out := filepath.Join(t.TempDir(), "copy.db")
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	n, err := s.Backup(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Positive(t, n)
	require.NoError(t, VerifyFile(out))

	c, err := Open(Options{Path: out, MasterKey: mk})
	require.NoError(t, err)
	defer c.Close()
	got, err := c.App(a.ID)
	require.NoError(t, err)
	require.Equal(t, a.Secret, got.Secret)
}

func TestVerifyFileRejectsGarbage(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "junk.db")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("x"), 8192), 0o600))
	require.Error(t, VerifyFile(p))
}

// A data file written by a newer idvault (a later schema) is refused in one line naming the file,
// both schema versions as numbers and what to do, and is left byte for byte as it was.
func TestSchemaFromTheFutureIsRefused(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("schema"), []byte{0, 0, 0, 0, 0, 0, 0, 99})
	}))
	require.NoError(t, s.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Open(Options{Path: path, MasterKey: mk})
	require.ErrorIs(t, err, ErrSchema)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	for _, want := range []string{path, fmt.Sprintf("file has 99, this idvault reads up to %d", SchemaVersion), "newer one", "backup taken before the upgrade"} {
		require.Contains(t, msg, want)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "the refused file is left as it was")
}

func TestMasterKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "master.key")
	// A key file in a directory that does not exist (a mistyped store.key_file) is refused,
	// and no directory is made.
	_, _, err := LoadOrCreateMasterKey(path, filepath.Join(dir, "no-data-file.db"))
	require.ErrorIs(t, err, ErrNoDirectory)
	require.ErrorContains(t, err, "mkdir -p -m 0700 "+filepath.Join(dir, "sub"))
	require.NoDirExists(t, filepath.Join(dir, "sub"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	mk, created, err := LoadOrCreateMasterKey(path, filepath.Join(dir, "no-data-file.db"))
	require.NoError(t, err)
	require.True(t, created)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	again, created, err := LoadOrCreateMasterKey(path, filepath.Join(dir, "no-data-file.db"))
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, mk.Derive("x"), again.Derive("x"))
	require.NotEqual(t, mk.Derive("x"), mk.Derive("y"))

	require.NoError(t, os.Chmod(path, 0o644))
	_, _, err = LoadOrCreateMasterKey(path, filepath.Join(dir, "no-data-file.db"))
	require.ErrorContains(t, err, "chmod 600")

	bad := filepath.Join(t.TempDir(), "bad.key")
	require.NoError(t, os.WriteFile(bad, []byte("not base64!"), 0o600))
	_, _, err = LoadOrCreateMasterKey(bad, filepath.Join(dir, "no-data-file.db"))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "not base64!")
}

// A second app with the name of another, in any case, is refused, and nothing is written.
func TestCreateAppRefusesATakenName(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	a, b := testApp(1), testApp(2)
	a.Name, b.Name = "Shop", "shop"
	require.NoError(t, s.CreateApp(a))
	require.ErrorIs(t, s.CreateApp(b), ErrNameTaken)
	_, err := s.App(b.ID)
	require.ErrorIs(t, err, ErrNotFound)
	b.Name = "shop 2"
	require.NoError(t, s.CreateApp(b))
}
