package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// goodDataFile writes a data file with one app, 300 identities, codes (some expired) and their
// throttle counters, and returns its bytes.
func goodDataFile(t *testing.T, mk *MasterKey) []byte {
	t.Helper()
	s, path := openTemp(t, mk)
	app := testApp(3)
	require.NoError(t, s.CreateApp(app))
	for i := range 300 {
		email := fmt.Sprintf("user%03d@example.com", i)
		putIdentity(t, s, app.ID, email, fmt.Sprintf("perm-%03d-%0200d", i, i), fmt.Sprintf("pub-%03d-%080d", i, i))
		if i%10 == 0 {
			in := issue(app.ID, email, "123456", true)
			if i%20 == 0 {
				in.TTL, in.Retain = time.Nanosecond, time.Nanosecond // swept
			}
			_, err := s.IssueCode(in)
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// pagesInUse is the number of pages the meta page of a data file counts (its high-water mark):
// bbolt reads no page past it.
func pagesInUse(t testing.TB, data []byte) int {
	t.Helper()
	_, _, hwm, err := (&pageWalker{data: data, ps: testPageSize}).meta()
	require.NoError(t, err)
	return int(hwm)
}

// namedStoreErrors are the errors a damaged file may give besides ErrDamaged: a damaged sealed
// value fails to open, a damaged key reads as a missing one, a damaged master key check or
// schema is named as such.
var namedStoreErrors = []error{ErrDamaged, ErrSealed, ErrNotFound, ErrWrongMasterKey, ErrSchema, ErrCodeMismatch, ErrCodeExpired, ErrCodeUsed}

func requireNamed(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, named := range namedStoreErrors {
		if errors.Is(err, named) {
			return
		}
	}
	if strings.HasSuffix(err.Error(), ": not an idvault data file") {
		return // VerifyFile: a bbolt file without idvault's meta bucket (its name damaged)
	}
	t.Fatalf("%s: an error that names no store error: %v", what, err)
}

// exercise runs every kind of call on a store whose file is damaged: each succeeds or returns a
// named store error. Once a call met the damage, Ping reports it and writes are refused. It
// returns whether the damage was met.
func exercise(t *testing.T, s *Store, what string) bool {
	t.Helper()
	app := testApp(3)
	_, err := s.Apps()
	requireNamed(t, err, what+": apps")
	_, err = s.App(app.ID)
	requireNamed(t, err, what+": app")
	_, err = s.CountRecords(app.ID)
	requireNamed(t, err, what+": count")
	for _, i := range []int{0, 150, 299} {
		_, err = s.PrivateRecord(app.ID, fmt.Sprintf("user%03d@example.com", i))
		requireNamed(t, err, what+": private record")
	}
	_, err = s.Publics(app.ID, []string{"user001@example.com", "user200@example.com"})
	requireNamed(t, err, what+": publics")
	_, err = s.UpdateRecord(app.ID, "new@example.com", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
	requireNamed(t, err, what+": update record")
	_, err = s.IssueCode(issue(app.ID, "user010@example.com", "654321", true))
	requireNamed(t, err, what+": issue code")
	_, err = s.SweepCodes(1000)
	requireNamed(t, err, what+": sweep codes")
	_, err = s.SweepThrottle(1000)
	requireNamed(t, err, what+": sweep throttle")
	_, err = s.Backup(io.Discard)
	requireNamed(t, err, what+": backup")
	if snap, err := s.Snapshot(); err == nil {
		require.NoError(t, snap.Close())
	} else {
		requireNamed(t, err, what+": snapshot")
	}
	err = s.Ping()
	if err == nil {
		return false
	}
	require.ErrorIs(t, err, ErrDamaged, what+": ping")
	require.Contains(t, err.Error(), s.Path(), what)
	var short interface{ Cause() string } // what /readyz shows
	require.ErrorAs(t, err, &short, what)
	require.Equal(t, "data file damaged", short.Cause(), what)
	require.ErrorIs(t, s.DeleteApp(app.ID), ErrDamaged, what+": a write after damage")
	_, err = s.UpdateRecord(app.ID, "later@example.com", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
	require.ErrorIs(t, err, ErrDamaged, what+": a grouped write after damage")
	return true
}

// randomBytes are n bytes of rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

const testPageSize = 4096

// A data file damaged anywhere (48 random bytes at three offsets of every page in use, seeded) is
// opened, read, written, swept, backed up and verified without a panic, a fatal memory fault or
// a hang: each call succeeds or returns a named store error, ErrDamaged for a damaged page, which
// names the file and what to do.
func TestDamagedDataFileIsAnErrorNeverACrash(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	good := goodDataFile(t, mk)
	rng := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "idvault.db")
	refused, metLater := 0, 0
	for page := range pagesInUse(t, good) {
		for _, off := range []int{8, 200, 3000} {
			what := fmt.Sprintf("page %d offset %d", page, off)
			data := append([]byte(nil), good...)
			copy(data[page*testPageSize+off:], randomBytes(rng, 48))
			require.NoError(t, os.WriteFile(path, data, 0o600))

			requireNamed(t, CheckDataFile(path), what+": check data file")
			requireNamed(t, VerifyFile(path), what+": verify")
			s, err := Open(Options{Path: path, MasterKey: mk, RecordCacheBytes: -1})
			if err != nil {
				requireNamed(t, err, what+": open")
				if errors.Is(err, ErrDamaged) {
					refused++
					require.Contains(t, err.Error(), "the data file "+path+" is damaged", what)
					require.Contains(t, err.Error(), "restore the data file from a backup", what)
				}
				continue
			}
			if exercise(t, s, what) {
				metLater++
			}
			require.NoError(t, s.Close(), what)
		}
	}
	t.Logf("%d damaged files refused at open, %d met the damage later", refused, metLater)
	require.Greater(t, refused, 50, "the page check at open finds damaged pages")
}

// Pages damaged under an open store (the file is written by something else while the server
// runs: bbolt maps it, so it reads the new bytes) are an error too: bbolt's panics and memory
// faults become ErrDamaged, a write transaction that panics is rolled back without bbolt's
// freelist rebuild (a page walk in a goroutine nothing can recover), and the sweeps stop on keys
// that do not move on instead of going round for ever.
func TestPagesDamagedUnderAnOpenStoreAreAnErrorNeverACrash(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	good := goodDataFile(t, mk)
	rng := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "idvault.db")
	met := 0
	for page := range pagesInUse(t, good) {
		for _, off := range []int{0, 16, 3000} {
			what := fmt.Sprintf("page %d offset %d, damaged while open", page, off)
			require.NoError(t, os.WriteFile(path, good, 0o600))
			s, err := Open(Options{Path: path, MasterKey: mk, RecordCacheBytes: -1})
			require.NoError(t, err, what)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(randomBytes(rng, 48), int64(page*testPageSize+off))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			if exercise(t, s, what) {
				met++
			}
			require.NoError(t, s.Close(), what)
		}
	}
	t.Logf("%d stores met the damage", met)
	require.Greater(t, met, 100)
}

// A branch page that points at itself (a loop bbolt's cursors would follow for ever, the stack
// growing until the process dies) is refused when the file opens.
func TestAPageLoopIsRefusedAtOpen(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	good := goodDataFile(t, mk)
	path := filepath.Join(t.TempDir(), "idvault.db")
	branch := -1
	for page := 2; page < len(good)/testPageSize; page++ {
		p := good[page*testPageSize:]
		if binary.NativeEndian.Uint64(p) == uint64(page) && binary.NativeEndian.Uint16(p[8:]) == flagBranch {
			branch = page
			break
		}
	}
	require.Positive(t, branch, "the file has a branch page")
	data := append([]byte(nil), good...)
	binary.NativeEndian.PutUint64(data[branch*testPageSize+pageHeaderSize+8:], uint64(branch)) // first element's child
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err := Open(Options{Path: path, MasterKey: mk})
	require.ErrorIs(t, err, ErrDamaged)
	require.ErrorContains(t, err, fmt.Sprintf("page %d: reached twice", branch))
	require.ErrorIs(t, VerifyFile(path), ErrDamaged)
}

// FuzzDamagedDataFile damages a small data file (damage written at offset, modulo its size) and
// opens, reads, writes and verifies it: nothing panics or faults (checkPages is bounds-checked,
// and a file it passes holds no page that bbolt's own walks, in goroutines nothing can recover,
// would trip on), and every error is a named store error.
func FuzzDamagedDataFile(f *testing.F) {
	raw := bytes.Repeat([]byte{7}, MasterKeySize)
	mk, err := NewMasterKey(raw)
	require.NoError(f, err)
	dir := f.TempDir()
	s, err := Open(Options{Path: filepath.Join(dir, "good.db"), MasterKey: mk})
	require.NoError(f, err)
	app := testApp(3)
	require.NoError(f, s.CreateApp(app))
	emails := make([]string, 60)
	for i := range emails {
		emails[i] = fmt.Sprintf("user%03d@example.com", i)
	}
	_, err = s.UpdateRecords(app.ID, emails, func(i int, r *Record, _ bool) (bool, error) {
		r.UserID, r.PermanentIdentity = emails[i], fmt.Sprintf("perm-%0200d", i)
		return true, nil
	})
	require.NoError(f, err)
	require.NoError(f, s.Close())
	good, err := os.ReadFile(filepath.Join(dir, "good.db"))
	require.NoError(f, err)
	hwm := pagesInUse(f, good)
	for page := 2; page < hwm; page++ {
		f.Add(uint32(page*testPageSize+16), []byte{0xff, 0xff, 0xff, 0xff})
		f.Add(uint32(page*testPageSize+8), []byte{1, 0, 0xff, 0xff})
	}
	f.Fuzz(func(t *testing.T, offset uint32, damage []byte) {
		data := append([]byte(nil), good...)
		copy(data[int(offset)%(hwm*testPageSize):], damage)
		path := filepath.Join(t.TempDir(), "idvault.db")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		requireNamed(t, VerifyFile(path), "verify")
		s, err := Open(Options{Path: path, MasterKey: mk, RecordCacheBytes: -1})
		if err != nil {
			requireNamed(t, err, "open")
			return
		}
		defer s.Close()
		_, err = s.Apps()
		requireNamed(t, err, "apps")
		_, err = s.Publics(app.ID, emails[:5])
		requireNamed(t, err, "publics")
		_, err = s.UpdateRecord(app.ID, "new@example.com", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
		requireNamed(t, err, "update record")
		_, err = s.SweepThrottle(100)
		requireNamed(t, err, "sweep throttle")
	})
}

// A panic message of bbolt that prints the file's bytes in hex (a key: app ID and email) is kept
// without them in the error, which goes to the log.
func TestDamageMessageLeavesTheFileBytesOut(t *testing.T) {
	t.Parallel()
	key := hex.EncodeToString([]byte("app-id-0123456789u160@example.com"))
	msg := withoutBytes("misplaced bucket header: 7265636f726473 -> " + key)
	require.NotContains(t, msg, key)
	require.NotContains(t, msg, hex.EncodeToString([]byte("@example.com")))
	require.Equal(t, "misplaced bucket header: 7265636f726473 -> (bytes left out)", msg)
	require.Equal(t, "invalid page type: 12: 10", withoutBytes("invalid page type: 12: 10"))
}

// A sweep of the throttle bucket that finds its keys out of order (a page damaged under the open
// store) latches the damage as any other ErrDamaged: /readyz reports it and writes are refused.
func TestSweepThrottleOnKeysOutOfOrderLatchesTheDamage(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t, newKey(t))
	never := bytes.Repeat([]byte{0xff}, 16) // a window that ends after the sweep's now
	require.NoError(t, s.update(func(tx *bolt.Tx) error {
		for _, k := range []string{"sweep-order-a", "sweep-order-b", "sweep-order-c"} {
			if err := tx.Bucket(bucketThrottle).Put([]byte(k), never); err != nil {
				return err
			}
		}
		return nil
	}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	at := bytes.Index(data, []byte("sweep-order-c"))
	require.Positive(t, at)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("sweep-order-0"), int64(at)) // now below "sweep-order-b", after it
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, err = s.SweepThrottle(1)
	require.ErrorIs(t, err, ErrDamaged)
	require.ErrorIs(t, s.Ping(), ErrDamaged)
	require.ErrorIs(t, s.DeleteApp(testApp(3).ID), ErrDamaged)
}
