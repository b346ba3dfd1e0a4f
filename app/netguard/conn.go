package netguard

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is a connection accepted by a Listener. It leaves the listener's count when closed,
// and can hold an idle limit on reads (StartBody) and on writes (Config.WriteIdle): a read or
// write that waits that long without a byte fails with a timeout, while one that keeps moving
// is never cut, whatever the size. The deadlines are refreshed lazily, at most once per eighth
// of the limit, by the Read or Write that starts a new eighth: no per-byte work, and a
// connection is dropped after between 7/8 of the limit and the limit of silence.
type Conn struct {
	net.Conn
	release   func()
	closeOnce sync.Once
	born      time.Time

	mu        sync.Mutex
	readIdle  atomic.Int64 // nanoseconds; > 0 while a request body is read (StartBody)
	writeIdle atomic.Int64 // nanoseconds; > 0 when the listener has a write idle limit
	readArmed atomic.Int64 // nanoseconds since born when the read deadline was last set
	wroteArm  atomic.Int64 // same for the write deadline
	readCut   bool         // a deadline in the past was asked for: never refreshed again
	writeCut  bool
	readAny   atomic.Bool // a byte has arrived (since AwaitRequest)
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

// StartBody puts reads under an idle limit instead of the deadlines the HTTP server sets:
// call it when the request headers are read and the handler starts reading the body. A read
// deadline asked for afterwards is ignored unless it is in the past (a cut), which stays.
func StartBody(nc net.Conn, idle time.Duration) {
	c, ok := nc.(*Conn)
	if !ok || idle <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readCut = false
	c.readIdle.Store(int64(idle))
	c.armRead(time.Now())
}

// EndBody gives the read deadline back to the HTTP server (the request is answered).
func EndBody(nc net.Conn) {
	c, ok := nc.(*Conn)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readIdle.Store(0)
}

// AwaitRequest puts a connection whose answer was written outside the HTTP server (a hijacked
// stream) back to waiting for a request, as a new one: reads leave the body's idle limit (and
// a cut of it), and until a byte of the next request arrives the connection counts as a spare
// one (ReadNothing), which a header time limit closes without an answer. Connections that
// are not guarded are left as they are.
func AwaitRequest(nc net.Conn) {
	c, ok := nc.(*Conn)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readIdle.Store(0)
	c.readCut = false
	c.readAny.Store(false)
}

// armRead sets the read deadline an idle limit from now (c.mu held).
func (c *Conn) armRead(now time.Time) {
	if idle := time.Duration(c.readIdle.Load()); idle > 0 && !c.readCut {
		_ = c.Conn.SetReadDeadline(now.Add(idle))
		c.readArmed.Store(int64(now.Sub(c.born)))
	}
}

func (c *Conn) armWrite(now time.Time) {
	if idle := time.Duration(c.writeIdle.Load()); idle > 0 && !c.writeCut {
		_ = c.Conn.SetWriteDeadline(now.Add(idle))
		c.wroteArm.Store(int64(now.Sub(c.born)))
	}
}

// Read reads, refreshing the body idle deadline when an eighth of it went by since it was set.
func (c *Conn) Read(p []byte) (int, error) {
	if idle := c.readIdle.Load(); idle > 0 {
		now := time.Now()
		if int64(now.Sub(c.born))-c.readArmed.Load() > idle/8 {
			c.mu.Lock()
			c.armRead(now)
			c.mu.Unlock()
		}
	}
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

// Write writes, refreshing the write idle deadline the same way.
func (c *Conn) Write(p []byte) (int, error) {
	c.refreshWrite()
	return c.Conn.Write(p)
}

// WriteBuffers writes bufs as Write would, in one writev: net.Buffers uses writev only on the
// net package's own connections, which this wrapper hides.
func (c *Conn) WriteBuffers(bufs *net.Buffers) (int64, error) {
	c.refreshWrite()
	return bufs.WriteTo(c.Conn)
}

func (c *Conn) refreshWrite() {
	if idle := c.writeIdle.Load(); idle > 0 {
		now := time.Now()
		if int64(now.Sub(c.born))-c.wroteArm.Load() > idle/8 {
			c.mu.Lock()
			c.armWrite(now)
			c.mu.Unlock()
		}
	}
}

// SetDeadline sets both deadlines (see SetReadDeadline and SetWriteDeadline).
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// SetReadDeadline sets the read deadline, except while a body is read under its idle limit:
// then only a deadline in the past (a cut) applies.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readIdle.Load() > 0 {
		if t.IsZero() || t.After(time.Now()) {
			return nil
		}
		c.readCut = true
	}
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline, except under a write idle limit: then only a
// deadline in the past (a cut) applies.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writeIdle.Load() > 0 {
		if t.IsZero() || t.After(time.Now()) {
			return nil
		}
		c.writeCut = true
	}
	return c.Conn.SetWriteDeadline(t)
}
