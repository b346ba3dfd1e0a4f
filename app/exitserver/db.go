package exitserver

import (
	"context"
	"sync"
	"time"

	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// DB is what the handlers need from the restored dump and the imported keys. *exitdb.DB (the
// PostgreSQL database) implements it; so does exitfake's in-memory stand-in for tests. Its
// errors are exitdb's: the handlers map them to the catalogue.
type DB interface {
	// Ping reports whether the database answers; an error wrapping exitdb.ErrUnavailable when
	// not.
	Ping(ctx context.Context) error
	// Import stores what decrypting needs for each private identity, all or nothing. Bad entries
	// are reported as *exitdb.ImportError; a database that does not answer as
	// exitdb.ErrUnavailable.
	Import(ctx context.Context, identities []string) (exitdb.ImportResult, error)
	// KeyFinder resolves 16-byte resource, session and seed IDs to keys. Its errors wrap
	// encryption.ErrKeyNotFound (as *exitdb.KeyNotFoundError when keys were published under
	// the ID) or exitdb.ErrUnavailable.
	KeyFinder(ctx context.Context) encryption.KeyFinder
	// AuditKeys reports, for each 16-byte ID, whether a key published under it reaches
	// imported material and, when not, which users hold one (by hashed user ID), without
	// opening any key. Errors wrap exitdb.ErrUnavailable when the database does not answer.
	AuditKeys(ctx context.Context, ids []encryption.SimpleID) ([]exitdb.KeyAudit, error)
	// AppID is the 32-byte ID of the app whose dump the database holds.
	AppID() []byte
}

var _ DB = (*exitdb.DB)(nil)

// lookupContext bounds the database work of resolving keys (KeyLookupTimeout). It does not
// follow the request's context: a lookup a client stopped waiting for still fills the key
// cache. Call its cancel once the lookups are done. It is never recycled: a database driver
// may watch it from a goroutine of its own (context.AfterFunc) after the lookup returned.
func (s *Server) lookupContext() *lookupCtx {
	return &lookupCtx{deadline: time.Now().Add(s.cfg.KeyLookupTimeout)}
}

// lookupCtx is a context.Context with a deadline of its own, whose timer is made only when
// something waits on it (Done: a lookup that goes to the database): a key found in the
// key cache, as most are, costs no timer.
type lookupCtx struct {
	deadline time.Time

	mu       sync.Mutex
	ctx      context.Context // context.WithDeadline's, once needed
	stop     context.CancelFunc
	canceled bool
}

func (c *lookupCtx) inner() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.ctx, c.stop = context.WithDeadline(context.Background(), c.deadline)
		if c.canceled {
			c.stop()
		}
	}
	return c.ctx
}

func (c *lookupCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *lookupCtx) Done() <-chan struct{}       { return c.inner().Done() }

// Err is context.WithDeadline's, read from the clock until a timer is made.
func (c *lookupCtx) Err() error {
	c.mu.Lock()
	inner, canceled := c.ctx, c.canceled
	c.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case canceled:
		return context.Canceled
	case !time.Now().Before(c.deadline):
		return context.DeadlineExceeded
	}
	return nil
}

func (c *lookupCtx) Value(any) any { return nil }

// cancel ends the context, as context.WithDeadline's cancel does.
func (c *lookupCtx) cancel() {
	c.mu.Lock()
	c.canceled = true
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
