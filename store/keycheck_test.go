package store

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A data file opens only under the master key it was created with: another key is refused at
// once, with the file left as it was, instead of a server whose every read fails and whose new
// writes are sealed under a second key.
func TestDataFileOpensOnlyUnderItsMasterKey(t *testing.T) {
	t.Parallel()
	mk, other := newKey(t), newKey(t)
	path := fileWithApp(t, mk, 1)
	before := fileSum(t, path)

	_, err := Open(Options{Path: path, MasterKey: other})
	require.ErrorIs(t, err, ErrWrongMasterKey)
	require.ErrorContains(t, err, path)
	require.Equal(t, before, fileSum(t, path), "a refused open writes nothing")

	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	a, err := s.App(testApp(1).ID)
	require.NoError(t, err)
	require.Equal(t, testApp(1).Secret, a.Secret)
	require.NoError(t, s.Close())
}

// A data file written before the key check existed has none: its first app's secret tells the
// key, and the check is written once the right key opened it. A file with no app has nothing
// sealed, so any key may take it.
func TestKeyCheckOfAFileWithoutOne(t *testing.T) {
	t.Parallel()
	mk, other := newKey(t), newKey(t)
	path := fileWithApp(t, mk, 2)
	dropKeyCheck(t, path)

	_, err := Open(Options{Path: path, MasterKey: other})
	require.ErrorIs(t, err, ErrWrongMasterKey)
	require.False(t, hasKeyCheck(t, path), "a refused open writes no check")

	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.True(t, hasKeyCheck(t, path))
	_, err = Open(Options{Path: path, MasterKey: other})
	require.ErrorIs(t, err, ErrWrongMasterKey, "refused by the check now written")

	empty := filepath.Join(t.TempDir(), "empty.db")
	s, err = Open(Options{Path: empty, MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	dropKeyCheck(t, empty)
	s, err = Open(Options{Path: empty, MasterKey: other})
	require.NoError(t, err, "nothing sealed in it: any key may take it")
	require.NoError(t, s.Close())
	_, err = Open(Options{Path: empty, MasterKey: mk})
	require.ErrorIs(t, err, ErrWrongMasterKey, "it now belongs to the key that took it")
}

// A missing key file next to an existing data file is an error, and no key is made: a new key
// would open none of the file's secrets, and a stray key file would pass for the right one.
func TestNoNewMasterKeyForAnExistingDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, key := filepath.Join(dir, "idvault.db"), filepath.Join(dir, "master.key")
	s, err := Open(Options{Path: data, MasterKey: newKey(t)})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, created, err := LoadOrCreateMasterKey(key, data)
	require.ErrorIs(t, err, ErrMasterKeyMissing)
	require.False(t, created)
	require.ErrorContains(t, err, key)
	require.ErrorContains(t, err, data)
	require.NoFileExists(t, key)
}

// A data path that is no data file (a directory, a file bbolt does not read, such as a config
// file given to --data by mistake) is named as such when its key is missing, rather than sending
// the operator after a key file that would not help; no key is made.
func TestMissingKeyBesideSomethingThatIsNoDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "master.key")
	notBolt := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(notBolt, []byte("server:\n  listen: 127.0.0.1:8080\n"), 0o600))
	// A config file of the size idvault init writes (2 KiB and more): bbolt says "file size too
	// small", not ErrInvalid, for it.
	config := filepath.Join(dir, "prod.yaml")
	require.NoError(t, os.WriteFile(config, []byte(strings.Repeat("# a comment line of a config file\n", 80)), 0o600))
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for path, want := range map[string]string{
		dir:         dir + " is a directory",
		notBolt:     notBolt + " is not an idvault data file",
		config:      config + " is not an idvault data file",
		"/dev/zero": "/dev/zero is not a regular file (a character device)",
		fifo:        fifo + " is not a regular file (a named pipe)",
	} {
		_, created, err := LoadOrCreateMasterKey(key, path)
		require.ErrorContains(t, err, want)
		require.NotErrorIs(t, err, ErrMasterKeyMissing)
		require.False(t, created)
		require.NoFileExists(t, key)
	}
}

// Open, with a key, names a data path that is no data file as such too, and leaves it as it was.
func TestOpenNamesSomethingThatIsNoDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "prod.yaml")
	text := []byte(strings.Repeat("# a comment line of a config file\n", 80))
	require.NoError(t, os.WriteFile(config, text, 0o600))
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for path, want := range map[string]string{
		dir:         dir + " is a directory",
		config:      config + " is not an idvault data file",
		"/dev/zero": "/dev/zero is not a regular file (a character device)",
		fifo:        fifo + " is not a regular file (a named pipe)",
	} {
		_, err := Open(Options{Path: path, MasterKey: newKey(t)})
		require.ErrorContains(t, err, want)
	}
	raw, err := os.ReadFile(config)
	require.NoError(t, err)
	require.Equal(t, text, raw, "the file is left as it was")
}

// fileWithApp is a closed data file made under mk, holding testApp(id).
func fileWithApp(t *testing.T, mk *MasterKey, id byte) string {
	path := filepath.Join(t.TempDir(), "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.CreateApp(testApp(id)))
	require.NoError(t, s.Close())
	return path
}

func fileSum(t *testing.T, path string) [32]byte {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(raw)
}

func dropKeyCheck(t *testing.T, path string) {
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyCheckKey) }))
	require.NoError(t, db.Close())
}

func hasKeyCheck(t *testing.T, path string) bool {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	var ok bool
	require.NoError(t, db.View(func(tx *bolt.Tx) error { ok = tx.Bucket(bucketMeta).Get(keyCheckKey) != nil; return nil }))
	return ok
}

// A damaged app record (one that no longer decodes) does not decide: the next app's secret
// does, and the file still opens under its key.
func TestKeyCheckSkipsADamagedAppRecord(t *testing.T) {
	t.Parallel()
	mk, other := newKey(t), newKey(t)
	path := fileWithApp(t, mk, 9)
	dropKeyCheck(t, path)
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketApps).Put(make([]byte, 32), []byte("{damaged")) // sorts first
	}))
	require.NoError(t, db.Close())

	_, err = Open(Options{Path: path, MasterKey: other})
	require.ErrorIs(t, err, ErrWrongMasterKey)
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
