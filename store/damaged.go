package store

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// damagedError is an ErrDamaged naming the file and what was found wrong.
type damagedError struct {
	path, detail string
	cause        error // the error found, when there is one
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("store: the data file %s is damaged (%s): stop idvault and restore the data file from a backup (idvault backup makes verified copies), keeping the damaged file as it is", e.path, e.detail)
}

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

func (e *damagedError) Unwrap() error { return e.cause }

// Cause is the short reason /readyz shows (it shows no detail).
func (e *damagedError) Cause() string { return "data file damaged" }

// damaged makes the ErrDamaged of path, with detail (a panic value, or the error of a check or of
// a value that does not decode, which the error wraps).
func damaged(path string, detail any) error {
	cause, _ := detail.(error)
	return &damagedError{path: path, detail: fmt.Sprint(detail), cause: cause}
}

// guard runs f, the code that reads the data file's pages through bbolt (a transaction, an open,
// a check), and turns a panic or a memory fault in it into an ErrDamaged naming path.
//
// bbolt trusts the pages it maps: a damaged page makes it slice out of bounds, panic on an
// assertion, or read an address past the mapping, which is a fatal fault unless the goroutine
// asked for a panic instead (debug.SetPanicOnFault, meant for memory-mapped files). The setting
// is the goroutine's and is restored on return; it costs a field write. bbolt rolls the
// transaction back on the way out. A memory fault, or a panic raised in bbolt's code (also when
// the transaction's function called it: a cursor on a damaged page), is ErrDamaged; a panic
// raised in idvault's own code is a bug, not the file: an error that fails that call alone (see
// fromPanic).
//
// The code bbolt runs in goroutines of its own (the page walks of Tx.Check and of the freelist
// rebuild at open) is out of reach: checkPages runs before them (see Open and VerifyFile).
func guard(path string, f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fromPanic(path, r)
		}
	}()
	return f()
}

// fromPanic is the error of a panic recovered by guard: ErrDamaged for a memory fault or a panic
// raised in bbolt (it read a damaged page); another panic is a fault of idvault's own code in a
// transaction's function, an error that fails that call alone.
func fromPanic(path string, r any) error {
	if e, ok := r.(interface{ Addr() uintptr }); ok && e != nil {
		return damaged(path, r) // a memory fault: an address bbolt took from a page
	}
	if strings.HasPrefix(panicOrigin(), "go.etcd.io/bbolt") {
		return damaged(path, withoutBytes(fmt.Sprint(r)))
	}
	return fmt.Errorf("store: transaction failed: panic: %v", r)
}

// hexBytes is a run of hex digits long enough to be bytes of the file rather than a page number
// or flags.
var hexBytes = regexp.MustCompile(`[0-9a-fA-F]{16,}`)

// withoutBytes is a panic message of bbolt without the file's bytes some of them print in hex
// ("misplaced bucket header: %x -> %x"): a record's key holds its email, which the log and the
// error never show.
func withoutBytes(msg string) string {
	return hexBytes.ReplaceAllLiteralString(msg, "(bytes left out)")
}

// openGuarded is bolt.Open under guard: bbolt reads the meta pages (and, opening for writing, walks
// the tree to rebuild the freelist) as it opens.
func openGuarded(path string, o *bolt.Options) (db *bolt.DB, err error) {
	err = guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, o)
		return err
	})
	return db, err
}

// panicOrigin names the function that panicked, from a deferred function recovering: the first
// frame below runtime.gopanic that is not the runtime's.
func panicOrigin() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

// damage remembers the first ErrDamaged the open store met: from then on Ping reports it (so
// /readyz takes the server out) and writes are refused, so that bbolt does not write pages
// computed from damaged ones.
type damage struct {
	err atomic.Pointer[error]
}

// note records err when it is an ErrDamaged, and returns err.
func (d *damage) note(err error) error {
	if err != nil && errors.Is(err, ErrDamaged) {
		first := err // a copy, so that only this branch allocates
		d.err.CompareAndSwap(nil, &first)
	}
	return err
}

// get returns the first ErrDamaged met, or nil.
func (d *damage) get() error {
	if p := d.err.Load(); p != nil {
		return *p
	}
	return nil
}

// view is db.View under guard.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return s.damage.note(guard(s.db.Path(), func() error { return s.db.View(fn) }))
}

// update is db.Update, but a panic rolls the transaction back as an error does (Tx.Rollback,
// which drops the transaction's own pages), never through bbolt's rollback on a panic: with
// NoFreelistSync that one rebuilds the freelist by walking every page in a goroutine of its own,
// where a damaged page is a crash nothing can catch.
func update(db *bolt.DB, fn func(*bolt.Tx) error) error {
	tx, err := db.Begin(true)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			_ = tx.Rollback() // fn or Commit panicked: release the writer lock
		}
	}()
	if err := fn(tx); err != nil {
		closed = true
		_ = tx.Rollback()
		return err
	}
	err = tx.Commit()
	closed = true
	return err
}
