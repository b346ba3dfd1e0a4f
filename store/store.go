package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterr "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this code writes; it is recorded in the meta bucket.
//
// Version 2 stores identity records in a binary layout with their public identities (see
// records_codec.go); version 3 packs each identity before sealing it (records_pack.go: a new
// permanent identity's record takes about half the room). A file of an earlier version opens as
// is: its records are read in their layout (JSON for version 1, layout 2 for version 2) and
// rewritten in the current one when next written; its schema is raised so that an older idvault
// refuses the file instead of misreading new records.
const SchemaVersion = 3

// Bucket names: every bucket the store uses, created when the file opens.
var (
	bucketMeta     = []byte("meta")     // "schema" -> uint64 version, "created" -> RFC 3339, "key_check" (keycheck.go)
	bucketApps     = []byte("apps")     // app ID (32 bytes) -> JSON appRecord
	bucketRecords  = []byte("records")  // app ID || normalised email -> identity record (records_codec.go)
	bucketCodes    = []byte("codes")    // verification codes, see codes.go
	bucketThrottle = []byte("throttle") // throttling counters, see throttle.go

	allBuckets = [][]byte{bucketMeta, bucketApps, bucketRecords, bucketCodes, bucketThrottle}
)

// Options configure Open.
type Options struct {
	// Path of the bbolt data file. Its directory must exist (CheckDirectory): the file is
	// created in it if missing.
	Path string
	// MasterKey seals sensitive values.
	MasterKey *MasterKey
	// LockTimeout bounds the wait for the file lock; past it Open returns ErrLocked.
	LockTimeout time.Duration
	// RecordCacheBytes bounds the memory of the record cache (see recordCache): 0 is
	// DefaultRecordCacheBytes, a negative value switches the cache off.
	RecordCacheBytes int
	// NoLinger makes a group commit's leader commit at once under load (groupcommit.go, linger).
	NoLinger bool
	// SyncFreelist makes every commit write bbolt's free page list (bbolt's default), which
	// otherwise bbolt rebuilds by a scan when the file opens (bolt.Options.NoFreelistSync).
	SyncFreelist bool
	// ArrayFreelist keeps the free page list in bbolt's array (its default) instead of its map,
	// whose frees stay fast as the file grows.
	ArrayFreelist bool
}

// Store is an open data file. It is safe for concurrent use.
type Store struct {
	db    *bolt.DB
	seal  *sealer
	group *groupCommit // identity record and verification code writes share commits
	now   func() time.Time
	// cache answers reads of known records from memory; writeSeq orders the record writes of
	// one transaction for it.
	cache    *recordCache
	writeSeq atomic.Uint64
	// deleted refuses writes for apps deleted since the store opened (deleted_apps.go).
	deleted deletedApps
	// opened is the data file as Open found it, for checkFile.
	opened os.FileInfo
	// damage is the first ErrDamaged met (damaged.go): Ping reports it, writes are refused.
	damage damage
	// noPack seals identities as they are (the raw coding of layout 3): the baseline of
	// BenchmarkIdentityRecordWrites, set before the first write.
	noPack bool
}

// Open opens (creating if needed, in a directory that exists) the data file, creates every bucket
// and checks the schema: a file of a later schema is refused (ErrSchema) and left as it was.
func Open(opts Options) (*Store, error) {
	if opts.MasterKey == nil {
		return nil, errors.New("store: open: no master key")
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if err := CheckDirectory(opts.Path, "data file", "store.path or --data"); err != nil {
		return nil, err
	}
	_, statErr := os.Lstat(opts.Path)
	if st, err := os.Stat(opts.Path); err == nil {
		if err := checkKind(opts.Path, st); err != nil {
			return nil, err // bbolt would take a device or a pipe for a file to write
		}
	}
	if statErr == nil {
		if err := precheck(opts.Path, opts.LockTimeout); err != nil {
			return nil, err
		}
	}
	db, err := openBolt(opts, statErr)
	if err != nil {
		return nil, err
	}
	opened, err := os.Stat(opts.Path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", opts.Path, err)
	}
	seal, err := newSealer(opts.MasterKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, seal: seal, group: newGroupCommit(db), now: time.Now, cache: newRecordCache(opts.RecordCacheBytes), opened: opened}
	s.group.check, s.group.damage, s.group.noLinger = s.writable, &s.damage, opts.NoLinger
	if err := guard(opts.Path, s.init); err != nil {
		db.Close()
		if errors.Is(err, ErrWrongMasterKey) {
			return nil, fmt.Errorf("%w (%s): use the key file made with it", err, opts.Path)
		}
		return nil, err
	}
	removeStaleSnapshots(filepath.Dir(opts.Path))
	return s, nil
}

// openBolt opens the data file with bbolt, its freelist as opts says, and names why it cannot:
// ErrDamaged, ErrLocked when another process holds it, or what CheckDataFile finds wrong with
// it. statErr is the data file's Lstat error before the open: a file the open created and
// failed to write is removed.
func openBolt(opts Options, statErr error) (*bolt.DB, error) {
	// NoFreelistSync: a commit does not write the free page list (bbolt rebuilds it by scanning
	// when the file opens), which saves pages and time on every commit; committed data is
	// fsynced exactly as before. The map freelist keeps frees fast as the file grows.
	boltOpts := &bolt.Options{Timeout: opts.LockTimeout, NoFreelistSync: !opts.SyncFreelist, FreelistType: bolt.FreelistMapType}
	if opts.ArrayFreelist {
		boltOpts.FreelistType = bolt.FreelistArrayType
	}
	db, err := openGuarded(opts.Path, boltOpts)
	if errors.Is(err, ErrDamaged) {
		return nil, err
	}
	if errors.Is(err, bolterr.ErrTimeout) {
		return nil, lockedError(opts.Path)
	}
	if err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			// bbolt created the file and failed to write its first pages (a full disk): a
			// partial file would fail every later start with "file size too small" even once
			// space is freed, so it goes; the next start creates it again.
			os.Remove(opts.Path)
		} else if cerr := CheckDataFile(opts.Path); cerr != nil {
			return nil, cerr // a directory or no bbolt file, named as such
		}
		return nil, fmt.Errorf("store: open %s: %w", opts.Path, err)
	}
	return db, nil
}

// precheck checks the pages of an existing data file (checkPages) under a shared lock, before
// bbolt opens it for writing and rebuilds its freelist by walking every page in a goroutine
// where a damaged page is a crash. A file another process
// holds is ErrLocked; a file bbolt cannot open at all is left to the open that follows, which
// names the error.
func precheck(path string, timeout time.Duration) error {
	db, err := openGuarded(path, &bolt.Options{ReadOnly: true, Timeout: timeout})
	switch {
	case errors.Is(err, ErrDamaged):
		return err
	case errors.Is(err, bolterr.ErrTimeout):
		return lockedError(path)
	case err != nil:
		return nil
	}
	defer db.Close()
	return checkPages(path, db.Info().PageSize)
}

// lockedError is ErrLocked for the data file at path.
func lockedError(path string) error {
	return fmt.Errorf("%w: %s (is an idvault server running on it?)", ErrLocked, path)
}

// init creates the buckets, records or checks the schema version, and checks the master key
// (keycheck.go), in one transaction: a refused file is left as it was.
func (s *Store) init() error {
	return update(s.db, func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); errors.Is(err, bolterr.ErrIncompatibleValue) {
				return damaged(s.db.Path(), fmt.Errorf("bucket %s: a value, not a bucket", name))
			} else if err != nil {
				return fmt.Errorf("store: create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		v := meta.Get([]byte("schema"))
		switch {
		case v == nil:
			if err := meta.Put([]byte("created"), []byte(s.now().UTC().Format(time.RFC3339))); err != nil {
				return err
			}
		case len(v) != 8:
			return damaged(s.db.Path(), fmt.Errorf("schema version: %d bytes, not 8", len(v)))
		case binary.BigEndian.Uint64(v) > SchemaVersion:
			return newerSchema(s.db.Path(), binary.BigEndian.Uint64(v))
		}
		if err := s.checkMasterKey(tx); err != nil {
			return err
		}
		if v != nil && binary.BigEndian.Uint64(v) == SchemaVersion {
			return nil
		}
		return meta.Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, SchemaVersion))
	})
}

// newerSchema is ErrSchema for the data file at path, of schema version v: one line with both
// versions as numbers (the file's, then the binary's), the file and what to do.
func newerSchema(path string, v uint64) error {
	return fmt.Errorf("%w: file has %d, this idvault reads up to %d: %s was written by a newer idvault; run that version or a newer one, or restore the backup taken before the upgrade",
		ErrSchema, v, SchemaVersion, path)
}

// Close closes the data file. Pending writes have already been committed.
func (s *Store) Close() error {
	s.cache.close()
	err := s.db.Close() // waits for a commit still running, whose extension needs the file
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Ping checks that the file is open and readable (used by /readyz); once a damaged page was met
// (ErrDamaged), it reports that error until the store is closed.
func (s *Store) Ping() error {
	if err := s.damage.get(); err != nil {
		return err
	}
	if err := s.checkFile(); err != nil {
		return err
	}
	return s.view(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("store: meta bucket missing")
		}
		return nil
	})
}

// checkFile reports ErrDataFileGone when the data file's path no longer names the file open since
// Open: one stat, before each write transaction and in Ping (readiness). Without it, a data file
// deleted under a running server took writes with 200 and lost them all at the next start.
func (s *Store) checkFile() error {
	st, err := os.Stat(s.db.Path())
	if err == nil && os.SameFile(st, s.opened) {
		return nil
	}
	return fmt.Errorf("%w: %s: restart idvault on the data file (restore it from a backup if it is gone)", ErrDataFileGone, s.db.Path())
}

// writable refuses a write to a damaged file or to one no longer at its path (checkFile).
func (s *Store) writable() error {
	if err := s.damage.get(); err != nil {
		return err
	}
	return s.checkFile()
}

// update is a write transaction of its own, outside the group commit but as it runs one
// (groupCommit.safeUpdate: after writable, under guard, an ErrDamaged latched).
func (s *Store) update(fn func(*bolt.Tx) error) error { return s.group.safeUpdate(fn) }

// Path is the data file's path.
func (s *Store) Path() string { return s.db.Path() }

// Backup writes a consistent copy of the whole data file to w while the store stays in use,
// and returns the number of bytes written. Sealed values stay sealed in the copy.
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	ew := &errWriter{w: w}
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(ew)
		return err
	})
	if errors.Is(err, ErrDamaged) {
		return n, err
	}
	if err != nil {
		if ew.err != nil {
			// bbolt flattens the writer's error to text ("meta 0 copy: ..."); keep it
			// inspectable, so that a full disk (ENOSPC) is reported as one.
			return n, fmt.Errorf("store: backup: %w", ew.err)
		}
		return n, fmt.Errorf("store: backup: %w", err)
	}
	return n, nil
}

// errWriter remembers the first error its writer returned.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// SetClock replaces the store's clock (tests).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// VerifyFile opens a data file read-only and runs bbolt's consistency check on it (backups),
// after checkPages: a damaged file is an ErrDamaged, never a crash.
func VerifyFile(path string) error {
	db, err := openGuarded(path, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, ErrDamaged) {
		return err
	}
	if err != nil {
		return fmt.Errorf("store: verify %s: %w", path, err)
	}
	defer db.Close()
	if err := checkPages(path, db.Info().PageSize); err != nil {
		return err
	}
	return guard(path, func() error { return db.View(verifyTx(path)) })
}

// verifyTx is VerifyFile's transaction.
func verifyTx(path string) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		// Every error is read, so that bbolt's checking goroutine, which sends them one at a
		// time, ends with the transaction instead of waiting forever on a reader gone (one per
		// failed backup, in a server that keeps running).
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return damaged(path, withoutBytes(first.Error()))
		}
		if tx.Bucket(bucketMeta) == nil {
			return fmt.Errorf("store: verify %s: not an idvault data file", path)
		}
		return nil
	}
}
