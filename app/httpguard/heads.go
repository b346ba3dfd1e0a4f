package httpguard

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// Heads is the net/http flavour of the checks a server makes before routing (FramingOf's, and
// fasthttp's limits on a request's head): it wraps ln's connections so that each request head
// (request line and headers) is read whole, and checked, before net/http reads a byte of it.
// A head over HeadConfig.MaxBytes, one whose framing is ambiguous or unreadable (FramingOf, a
// bad Content-Length or Transfer-Encoding), and one that started but did not end within
// HeadConfig.Timeout are refused: net/http never sees them, and HeadConfig.Refuse writes the
// caller's answer before the connection closes. net/http answers these itself in plain text,
// or not at all (a slow head), and reads Content-Length with Transfer-Encoding as chunked.
// A connection that has sent nothing is closed without an answer, as net/http does.
//
// To know where the next head starts, a connection follows each body's framing as net/http
// reads it (bodyframe.go): bytes past a body's end wait for the next head's check.
func Heads(ln net.Listener, cfg HeadConfig) net.Listener {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxHead
	}
	return &headListener{Listener: ln, cfg: cfg}
}

// DefaultMaxHead is HeadConfig.MaxBytes's default: fasthttp's read buffer, which a head must
// fit in on the fiber server.
const DefaultMaxHead = 4096

// HeadConfig configures Heads.
type HeadConfig struct {
	// MaxBytes bounds a request line and its headers (default DefaultMaxHead).
	MaxBytes int
	// Timeout bounds a head from its first byte to its end.
	Timeout time.Duration
	// Refuse writes the answer to a refused head on w (the connection closes after it).
	Refuse func(w io.Writer, p HeadProblem)
}

// HeadProblem is why a head was refused.
type HeadProblem struct {
	Kind   HeadProblemKind
	Reason string // for HeadMalformed: what is wrong, for the client
}

// HeadProblemKind sorts refused heads.
type HeadProblemKind int

// The kinds of HeadProblem.
const (
	HeadTooLarge  HeadProblemKind = iota // over HeadConfig.MaxBytes
	HeadTimeout                          // started, not ended within HeadConfig.Timeout
	HeadMalformed                        // ambiguous or unreadable framing
)

type headListener struct {
	net.Listener
	cfg HeadConfig
}

func (l *headListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: c, cfg: &l.cfg, buf: make([]byte, 0, l.cfg.MaxBytes+1)}, nil
}

// headConn is a connection of Heads. Reads come from one goroutine at a time (net/http's
// connection reader); deadlines may be set from any.
type headConn struct {
	net.Conn
	cfg *HeadConfig

	buf    []byte // read from the connection and not yet handed on: buf[off:]
	off    int
	ready  int  // how many bytes of buf[off:] are checked, to hand on as they are
	inBody bool // the head was handed on; body follows it
	inHead bool // a head's first bytes arrived: its time limit runs
	body   bodyFrame
	err    error // sticky, after a refusal

	mu       sync.Mutex
	deadline time.Time     // the read deadline net/http (or a handler) asked for
	applied  time.Time     // the connection's read deadline
	reading  bool          // a read of the connection is waiting
	headBy   time.Time     // while a head is being read: its time limit
	idleBy   time.Time     // a shorter wait for the next head (WaitNextWithin)
	nextIdle time.Duration // asked for by WaitNextWithin, applied at the next wait
	refusal  *HeadProblem
	closed   bool
}

// Read hands on checked head bytes, then the body's bytes up to its end.
func (c *headConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.ready == 0 && !c.inBody {
		if err := c.readHead(); err != nil {
			return 0, err
		}
	}
	if c.ready == 0 && c.inBody && c.off < len(c.buf) { // body bytes read with the head
		n, err := c.body.advance(c.buf[c.off:])
		c.ready = n
		if err != nil && n == 0 {
			c.err = err
			return 0, err
		}
	}
	if c.ready > 0 {
		n := copy(p, c.buf[c.off:c.off+c.ready])
		c.off += n
		c.ready -= n
		if c.off == len(c.buf) {
			c.buf, c.off = c.buf[:0], 0
		}
		c.endBody()
		return n, nil
	}
	// The body, straight from the connection; no further than its end when its length is known.
	if !c.body.chunked && uint64(len(p)) > c.body.remain {
		p = p[:c.body.remain]
	}
	n, err := c.rawRead(p)
	k, ferr := c.body.advance(p[:n])
	if k < n { // the next head's first bytes
		c.buf = append(c.buf[:0], p[k:n]...)
		c.off = 0
	}
	c.endBody()
	if ferr != nil && k == 0 {
		c.err = ferr
		return 0, ferr
	}
	if k < n {
		err = nil
	}
	return k, err
}

// endBody goes back to reading a head once the body ended.
func (c *headConn) endBody() {
	if c.inBody && c.ready == 0 && c.body.done() {
		c.inBody = false
	}
}

// readHead reads until buf holds a whole head, checks it and makes it ready, or refuses it.
func (c *headConn) readHead() error {
	c.mu.Lock()
	if c.nextIdle > 0 {
		c.idleBy, c.nextIdle = time.Now().Add(c.nextIdle), 0
	}
	c.mu.Unlock()
	for {
		c.skipEmptyLines()
		if end := headEnd(c.buf[c.off:]); end > 0 {
			return c.checkHead(end)
		}
		if c.off < len(c.buf) && !c.inHead { // a head came in part: its time limit starts
			c.startHead()
		}
		if len(c.buf)-c.off > c.cfg.MaxBytes {
			return c.refuse(HeadProblem{Kind: HeadTooLarge})
		}
		if c.off > 0 {
			c.buf = append(c.buf[:0], c.buf[c.off:]...)
			c.off = 0
		}
		if len(c.buf) == cap(c.buf) {
			return c.refuse(HeadProblem{Kind: HeadTooLarge})
		}
		n, err := c.rawRead(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if err != nil {
			if c.headTimedOut(err) {
				return c.refuse(HeadProblem{Kind: HeadTimeout})
			}
			return err
		}
	}
}

// skipEmptyLines drops empty lines before a request line (RFC 9112 section 2.2: a server
// should ignore at least one), which net/http would take for a malformed request.
func (c *headConn) skipEmptyLines() {
	for c.off < len(c.buf) && (c.buf[c.off] == '\n' || c.buf[c.off] == '\r' && c.off+1 < len(c.buf) && c.buf[c.off+1] == '\n') {
		if c.buf[c.off] == '\r' {
			c.off++
		}
		c.off++
	}
}

// headEnd is the length of the head at the start of b (through its empty line), or 0.
func headEnd(b []byte) int {
	for i, first := 0, true; ; first = false {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		line := b[i : i+j]
		i += j + 1
		if !first && (len(line) == 0 || len(line) == 1 && line[0] == '\r') {
			return i
		}
	}
}

// checkHead checks the head of n bytes at buf[off:] and sets the body's framing.
func (c *headConn) checkHead(n int) error {
	head := c.buf[c.off : c.off+n]
	if n > c.cfg.MaxBytes {
		return c.refuse(HeadProblem{Kind: HeadTooLarge})
	}
	c.endHead()
	requestLine, fields, _ := bytes.Cut(head, []byte("\n"))
	facts := scanHeaders(fields)
	if reason := facts.framing(); reason != "" {
		return c.refuse(HeadProblem{Kind: HeadMalformed, Reason: reason})
	}
	c.body = bodyFrame{}
	proto := bytes.TrimSpace(requestLine[bytes.LastIndexByte(requestLine, ' ')+1:])
	switch {
	case facts.encodings > 0 && !bytes.HasPrefix(proto, []byte("HTTP/1.0")): // net/http ignores it on HTTP/1.0
		if !bytes.EqualFold(bytes.TrimSpace(facts.encoding), []byte("chunked")) {
			return c.refuse(HeadProblem{Kind: HeadMalformed, Reason: "the request's Transfer-Encoding is not chunked"})
		}
		c.body.chunked = true
	case facts.lengths > 0:
		length, ok := parseLength(facts.length)
		if !ok {
			return c.refuse(HeadProblem{Kind: HeadMalformed, Reason: "the request's Content-Length is not a number"})
		}
		c.body.remain = length
	}
	c.ready, c.inBody = n, true
	return nil
}

// refuse keeps the problem for Close to answer, and ends the reads: net/http sees a
// connection that closed before its request.
func (c *headConn) refuse(p HeadProblem) error {
	c.endHead()
	c.mu.Lock()
	c.refusal = &p
	c.mu.Unlock()
	c.err = io.EOF
	return io.EOF
}

// startHead starts the head's time limit at its first byte.
func (c *headConn) startHead() {
	c.inHead = true
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.Timeout > 0 {
		c.headBy = time.Now().Add(c.cfg.Timeout)
	}
	c.idleBy = time.Time{}
}

// endHead gives the read deadline back to net/http.
func (c *headConn) endHead() {
	c.inHead = false
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headBy, c.idleBy = time.Time{}, time.Time{}
}

// rawRead reads from the connection under the deadline that applies. Deadlines are set on the
// connection lazily, here, or at once when a read is waiting: net/http changes the read
// deadline several times per request, most often with no read in between.
func (c *headConn) rawRead(p []byte) (int, error) {
	c.mu.Lock()
	c.reading = true
	err := c.applyLocked()
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.reading = false
	c.mu.Unlock()
	return n, err
}

// headTimedOut reports whether err is the head's own time limit running out (not a deadline
// net/http set in the past to end a read).
func (c *headConn) headTimedOut(err error) bool {
	ne, ok := err.(net.Error)
	if !ok || !ne.Timeout() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.headBy.IsZero() && !time.Now().Before(c.headBy)
}

// SetReadDeadline keeps t for the reads of bodies and of the wait for a head; while a head
// is being read, its own time limit applies instead, unless t is in the past (a read ended).
func (c *headConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.reading {
		return c.applyLocked()
	}
	return nil // rawRead sets it before the next read
}

func (c *headConn) SetDeadline(t time.Time) error {
	if err := c.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// applyLocked sets the connection's read deadline from what applies (c.mu held).
func (c *headConn) applyLocked() error {
	t := c.deadline
	if !c.headBy.IsZero() || !c.idleBy.IsZero() {
		switch past := !t.IsZero() && !t.After(time.Now()); {
		case past:
		case !c.headBy.IsZero():
			t = c.headBy
		case t.IsZero() || c.idleBy.Before(t):
			t = c.idleBy
		}
	}
	if t.Equal(c.applied) {
		return nil
	}
	c.applied = t
	return c.Conn.SetReadDeadline(t)
}

// WaitNextWithin makes the connection that carries ctx's request (with ConnContext) wait at
// most d for its next request's first byte, rather than the server's idle timeout.
func WaitNextWithin(ctx context.Context, d time.Duration) {
	if c, ok := ctx.Value(connKey{}).(*headConn); ok {
		c.mu.Lock()
		c.nextIdle = d
		c.mu.Unlock()
	}
}

type connKey struct{}

// ConnContext is http.Server.ConnContext for Heads' connections: it lets WaitNextWithin find
// a request's connection.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*headConn); ok {
		return context.WithValue(ctx, connKey{}, hc)
	}
	return ctx
}

// refusalDrain bounds the wait, after a refusal's answer, for the client to close: closing
// with its bytes unread would reset the connection, and the client could lose the answer.
const refusalDrain = 500 * time.Millisecond

// Close writes the answer to a refused head, if any, then closes the connection.
func (c *headConn) Close() error {
	c.mu.Lock()
	p, closed := c.refusal, c.closed
	c.refusal, c.closed = nil, true
	c.mu.Unlock()
	if p != nil && !closed && c.cfg.Refuse != nil {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(refusalDrain))
		c.cfg.Refuse(c.Conn, *p)
		_ = c.Conn.SetReadDeadline(time.Now().Add(refusalDrain))
		_, _ = io.CopyN(io.Discard, c.Conn, 256<<10)
	}
	return c.Conn.Close()
}
