package store

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	t.Fatalf("%s: an error that names no store error: %v", what, err)
}

// A data file damaged anywhere (48 random bytes at several offsets of every page, seeded) is
// opened, read, written, swept, backed up and verified without a panic, a fatal memory fault or
// a hang: each call succeeds or returns a named store error, ErrDamaged for a damaged page, and
// once a damaged page was met Ping reports it and writes are refused.
func TestDamagedDataFileIsAnErrorNeverACrash(t *testing.T) {
	mk := newKey(t)
	good := goodDataFile(t, mk)
	app := testApp(3)
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	path := filepath.Join(dir, "idvault.db")
	const pageSize = 4096
	damagedOpens, damagedLater := 0, 0
	for page := range len(good) / pageSize {
		for _, off := range []int{0, 16, 200, 3000} {
			what := fmt.Sprintf("page %d offset %d", page, off)
			data := append([]byte(nil), good...)
			for i := range 48 {
				data[page*pageSize+off+i] = byte(rng.Uint32())
			}
			require.NoError(t, os.WriteFile(path, data, 0o600))

			requireNamed(t, CheckDataFile(path), what+": check data file")
			requireNamed(t, VerifyFile(path), what+": verify")
			s, err := Open(Options{Path: path, MasterKey: mk, RecordCacheBytes: -1})
			if err != nil {
				if errors.Is(err, ErrDamaged) {
					damagedOpens++
					require.Contains(t, err.Error(), path, what)
					require.Contains(t, err.Error(), "restore the data file from a backup", what)
				}
				requireNamed(t, err, what+": open")
				continue
			}
			_, err = s.Apps()
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
			if err := s.Ping(); err != nil {
				requireNamed(t, err, what+": ping")
				if errors.Is(err, ErrDamaged) {
					damagedLater++
					require.ErrorIs(t, s.DeleteApp(app.ID), ErrDamaged, what+": a write after damage")
				}
			}
			require.NoError(t, s.Close(), what)
		}
	}
	t.Logf("%d damaged files refused at open, %d met damage later", damagedOpens, damagedLater)
	require.Positive(t, damagedOpens, "the page check at open found damage")
}
