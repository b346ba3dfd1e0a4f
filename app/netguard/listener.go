// Package netguard keeps an HTTP server's accept loop alive and its connections bounded,
// whatever clients do: the listener it wraps retries failed accepts (a full file table,
// EMFILE/ENFILE) with a back-off instead of letting the server stop, caps the open connections
// in all and per client address (the excess is answered a minimal 503 and closed at once), and
// its connections can enforce an idle limit on answers (Config.WriteIdle) without any per-byte
// work. fasthttp ends Serve on any accept error but a timeout, so the listener never returns
// one until it is closed.
package netguard

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/idvault/idvault/app/logging"
)

// Config bounds a Listener. Zero fields take the defaults.
type Config struct {
	// MaxConns is the most connections open at once (default DefaultMaxConns).
	MaxConns int
	// MaxConnsPerIP is the most connections open at once from one client address (default
	// DefaultMaxConnsPerIP); addresses in Exempt are not counted.
	MaxConnsPerIP int
	// Exempt are addresses without a per-address cap (trusted reverse proxies: all their
	// clients share the proxy's address).
	Exempt func(net.IP) bool
	// WriteIdle, when positive, drops a connection whose writes wait that long without a byte
	// going out (a client that stops reading its answer); the server's own write deadlines are
	// then ignored.
	WriteIdle time.Duration
	// Logger receives one line per kind of refusal and accept failure per minute at most.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxConns      = 1024
	DefaultMaxConnsPerIP = 256
)

// Back-off of a failed accept: from acceptBackoffMin, doubling, up to acceptBackoffMax.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// busyResponse is what a connection over a cap gets before it is closed: no request was read.
var busyResponse = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n" +
	"Retry-After: 1\r\nConnection: close\r\nContent-Length: 41\r\n\r\ntoo many connections; retry in a moment.\n")

// Listener is a net.Listener that never fails but when closed, with the caps of Config.
type Listener struct {
	net.Listener
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	open   int
	perIP  map[string]int
	logged map[string]*logging.Every // kind -> when it was last logged

	closeOnce sync.Once
	closed    chan struct{}
}

// Listen wraps ln.
func Listen(ln net.Listener, cfg Config) *Listener {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerIP <= 0 {
		cfg.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, cfg: cfg, log: log, perIP: map[string]int{},
		logged: map[string]*logging.Every{}, closed: make(chan struct{})}
}

// Close closes the listener; a pending or later Accept returns net.ErrClosed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Open is the number of connections open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Accept returns the next connection within the caps. An accept error other than a closed
// listener is logged and retried after a back-off (5 ms doubling to 1 s); connections over a
// cap are answered 503 and closed.
func (l *Listener) Accept() (net.Conn, error) {
	backoff := time.Duration(0)
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.closed:
				return nil, net.ErrClosed
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			l.note("accept", "accepting a connection failed; retrying", "err", err, "retry_in", backoff.String())
			select {
			case <-time.After(backoff):
			case <-l.closed:
				return nil, net.ErrClosed
			}
			continue
		}
		backoff = 0
		if gc := l.admit(c); gc != nil {
			return gc, nil
		}
	}
}

// admit counts c in, or refuses it when over a cap.
func (l *Listener) admit(c net.Conn) net.Conn {
	ip := peerIP(c)
	key := ""
	if ip != nil && (l.cfg.Exempt == nil || !l.cfg.Exempt(ip)) {
		key = ip.String()
	}
	l.mu.Lock()
	refused, open := "", l.open
	switch {
	case l.open >= l.cfg.MaxConns:
		refused = "max_connections"
	case key != "" && l.perIP[key] >= l.cfg.MaxConnsPerIP:
		refused = "max_connections_per_ip"
	default:
		l.open++
		if key != "" {
			l.perIP[key]++
		}
	}
	l.mu.Unlock()
	if refused != "" {
		l.refuse(c)
		l.note(refused, "connection refused: too many open connections", "limit", refused, "open", open)
		return nil
	}
	gc := &Conn{Conn: c, release: func() { l.release(key) }, born: time.Now()}
	if l.cfg.WriteIdle > 0 {
		gc.write.idle.Store(int64(l.cfg.WriteIdle))
		gc.arm(&gc.write, gc.born)
	}
	return gc
}

func (l *Listener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if key != "" {
		if l.perIP[key]--; l.perIP[key] <= 0 {
			delete(l.perIP, key)
		}
	}
}

// refuse answers 503 without reading the request and closes c. The write goes to an empty
// socket buffer; its deadline only guards against a peer that is already gone.
func (l *Listener) refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write(busyResponse)
	_ = c.Close()
}

// note logs msg at most once a minute per kind.
func (l *Listener) note(kind, msg string, args ...any) {
	l.mu.Lock()
	e := l.logged[kind]
	if e == nil {
		e = &logging.Every{Period: time.Minute}
		l.logged[kind] = e
	}
	l.mu.Unlock()
	if e.Due(time.Now()) {
		l.log.Warn(msg, args...)
	}
}

func peerIP(c net.Conn) net.IP {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP
	}
	return nil
}
