package netguard

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is a connection accepted by a Listener. It leaves the listener's count when closed,
// and can hold an idle limit on writes (Config.WriteIdle): a write that waits that long without
// a byte fails with a timeout, while one that keeps moving is never cut, whatever the size. The
// deadline is refreshed lazily, at most once per eighth of the limit, by the Write that starts
// a new eighth: no per-byte work, and a connection is dropped after between 7/8 of the limit
// and the limit of silence.
type Conn struct {
	net.Conn
	release   func()
	closeOnce sync.Once
	born      time.Time

	mu      sync.Mutex
	write   idleLimit   // on when the listener has a write idle limit
	readAny atomic.Bool // a byte has arrived
}

// idleLimit is the idle limit of writes.
type idleLimit struct {
	idle  atomic.Int64 // nanoseconds; > 0 while the limit applies
	armed atomic.Int64 // nanoseconds since born when the deadline was last set
	cut   bool         // a deadline in the past was asked for: never refreshed again (c.mu)
}

// Close closes the connection and frees its place under the caps (once).
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		if c.release != nil {
			c.release()
		}
	})
	return err
}

// arm sets l's deadline an idle limit from now (c.mu held).
func (c *Conn) arm(l *idleLimit, now time.Time) {
	if idle := time.Duration(l.idle.Load()); idle > 0 && !l.cut {
		_ = c.setRaw(l, now.Add(idle))
		l.armed.Store(int64(now.Sub(c.born)))
	}
}

// refresh arms l again when an eighth of its limit went by since it was set.
func (c *Conn) refresh(l *idleLimit) {
	if idle := l.idle.Load(); idle > 0 {
		now := time.Now()
		if int64(now.Sub(c.born))-l.armed.Load() > idle/8 {
			c.mu.Lock()
			c.arm(l, now)
			c.mu.Unlock()
		}
	}
}

// setRaw sets the wrapped connection's write deadline.
func (c *Conn) setRaw(_ *idleLimit, t time.Time) error { return c.Conn.SetWriteDeadline(t) }

// setDeadline sets the write deadline, except under its idle limit: then only a deadline in
// the past (a cut) applies.
func (c *Conn) setDeadline(l *idleLimit, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.idle.Load() > 0 {
		if t.IsZero() || t.After(time.Now()) {
			return nil
		}
		l.cut = true
	}
	return c.setRaw(l, t)
}

// Read reads, noting the first byte (ReadNothing).
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.readAny.Load() {
		c.readAny.Store(true)
	}
	return n, err
}

// ReadNothing reports whether nc is a guarded connection on which no byte has arrived yet: a
// client's spare connection (HTTP clients dial ahead and keep the loser of a race idle), which
// a header time limit should close without an answer, since the client would read one as an
// unsolicited response.
func ReadNothing(nc net.Conn) bool {
	c, ok := nc.(*Conn)
	return ok && !c.readAny.Load()
}

// Write writes, refreshing the write idle deadline when an eighth of it went by since it was set.
func (c *Conn) Write(p []byte) (int, error) {
	c.refresh(&c.write)
	return c.Conn.Write(p)
}

// SetDeadline sets both deadlines (see SetReadDeadline and SetWriteDeadline).
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// SetReadDeadline sets the read deadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline, except under a write idle limit: then only a
// deadline in the past (a cut) applies.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(&c.write, t) }
