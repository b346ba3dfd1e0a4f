package mailtest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configures an in-process SMTP server.
type Options struct {
	// StartTLS offers STARTTLS with a self-signed certificate generated at start.
	StartTLS bool
	// ImplicitTLS makes the listener speak TLS from the first byte (SMTPS, tls=ssl).
	ImplicitTLS bool
	// Certificate, when set, is the TLS certificate served (for example one a PrivateCA
	// signed) instead of a self-signed one.
	Certificate *tls.Certificate
	// Username and Password, when set, make the server offer AUTH PLAIN and require a
	// successful AUTH before MAIL FROM (530 otherwise). AUTH is allowed without TLS.
	Username string
	Password string
	// Discard keeps no message data, only the count (for benchmarks).
	Discard bool
	// SMTPUTF8 offers the SMTPUTF8 extension (RFC 6531: non-ASCII addresses). Without it the
	// server, like go-smtp, still accepts a non-ASCII address sent without the extension.
	SMTPUTF8 bool
}

// Message is one message the server accepted.
type Message struct {
	// From is the envelope sender (MAIL FROM).
	From string
	// To holds the envelope recipients (RCPT TO).
	To []string
	// Data is the raw message as received after DATA (headers and body, CRLF line ends).
	Data []byte
	// TLS reports whether the session was encrypted (STARTTLS or implicit TLS).
	TLS bool
	// AuthUser is the authenticated user name, if any.
	AuthUser string
}

// Server is an in-process SMTP server on 127.0.0.1 for tests. It records the messages it
// accepts, counts the TCP connections it accepts, and can inject faults (SetFault).
type Server struct {
	opts  Options
	srv   *smtp.Server
	ln    *listener
	roots *x509.CertPool
	stop  chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	msgs     []Message
	count    int
	faults   map[Stage]*Fault
	accepted int
	conns    map[*trackedConn]struct{}
	closed   bool
}

// Start starts a server on 127.0.0.1:0 and closes it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := NewServer(opts)
	if err != nil {
		tb.Fatalf("mailtest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a server on 127.0.0.1:0. The caller must Close it.
func NewServer(opts Options) (*Server, error) {
	s := &Server{
		opts:   opts,
		stop:   make(chan struct{}),
		faults: make(map[Stage]*Fault),
		conns:  make(map[*trackedConn]struct{}),
	}
	var tlsConfig *tls.Config
	if opts.StartTLS || opts.ImplicitTLS {
		var cert tls.Certificate
		if opts.Certificate != nil {
			cert = *opts.Certificate
		} else {
			c, roots, err := selfSignedCert()
			if err != nil {
				return nil, err
			}
			cert, s.roots = c, roots
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	s.ln = &listener{Listener: tcp, s: s}
	var ln net.Listener = s.ln
	if opts.ImplicitTLS {
		ln = tls.NewListener(s.ln, tlsConfig)
	}

	srv := smtp.NewServer(backend{s})
	srv.Domain = "mailtest.localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.MaxMessageBytes = 10 << 20
	srv.EnableSMTPUTF8 = opts.SMTPUTF8
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if opts.StartTLS {
		srv.TLSConfig = tlsConfig
	}
	s.srv = srv
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = srv.Serve(ln)
	}()
	return s, nil
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Host returns "127.0.0.1".
func (s *Server) Host() string { return "127.0.0.1" }

// Port returns the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// RootCAs returns a pool holding the server's self-signed certificate (nil without TLS).
func (s *Server) RootCAs() *x509.CertPool { return s.roots }

// Connections returns the number of TCP connections accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// OpenConnections returns the number of TCP connections currently open.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Messages returns a copy of the messages accepted so far (data omitted with Discard).
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// MessageCount returns the number of messages accepted so far.
func (s *Server) MessageCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Reset forgets the recorded messages and the connection count, and clears the faults.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs, s.count, s.accepted = nil, 0, 0
	clear(s.faults)
}

// DropConnections closes every open connection abruptly, as a server does when it times
// out idle sessions or restarts. It returns how many it closed.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	conns := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

// Close stops the server, releases stalled handlers and closes all connections.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	_ = s.srv.Close()
	// Serve may not have registered the listener yet; closing it here ends Serve in any case.
	_ = s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
}

func (s *Server) record(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if s.opts.Discard {
		m.Data = nil
		if len(s.msgs) > 0 {
			return
		}
	}
	s.msgs = append(s.msgs, m)
}

// listener counts and tracks accepted connections and applies AtConnect faults.
type listener struct {
	net.Listener
	s *Server
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &trackedConn{Conn: raw, s: l.s}
		l.s.mu.Lock()
		l.s.accepted++
		l.s.conns[c] = struct{}{}
		l.s.mu.Unlock()
		f := l.s.trigger(AtConnect)
		if f == nil {
			return c, nil
		}
		l.s.wg.Add(1)
		go func() {
			defer l.s.wg.Done()
			switch f.Action {
			case Reply:
				_, _ = fmt.Fprintf(c, "%d %s mailtest: injected failure\r\n", f.Code, enhanced(f.Code))
			case Stall:
				l.s.stall(f)
			}
			_ = c.Close()
		}()
	}
}

// trackedConn removes itself from the server's open set when closed.
type trackedConn struct {
	net.Conn
	s    *Server
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

type backend struct{ s *Server }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	if err := b.s.inject(AtHelo, c); err != nil {
		return nil, err
	}
	_, isTLS := c.TLSConnectionState()
	return &session{s: b.s, conn: c, tls: isTLS}, nil
}

type session struct {
	s        *Server
	conn     *smtp.Conn
	tls      bool
	authUser string
	from     string
	to       []string
}

func (se *session) AuthMechanisms() []string {
	if se.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (se *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || se.s.opts.Username == "" {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		if err := se.s.inject(AtAuth, se.conn); err != nil {
			return err
		}
		if username != se.s.opts.Username || password != se.s.opts.Password {
			return smtp.ErrAuthFailed
		}
		se.authUser = username
		return nil
	}), nil
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	if se.s.opts.Username != "" && se.authUser == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0},
			Message: "Authentication required"}
	}
	if err := se.s.inject(AtMail, se.conn); err != nil {
		return err
	}
	se.from = from
	return nil
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := se.s.inject(AtRcpt, se.conn); err != nil {
		return err
	}
	se.to = append(se.to, to)
	return nil
}

func (se *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := se.s.inject(AtData, se.conn); err != nil {
		return err
	}
	se.s.record(Message{From: se.from, To: append([]string(nil), se.to...), Data: data,
		TLS: se.tls, AuthUser: se.authUser})
	return nil
}

func (se *session) Reset() {
	se.from, se.to = "", nil
}

func (se *session) Logout() error { return nil }

// errDropped is returned by handlers after they closed the connection.
var errDropped = errors.New("mailtest: connection dropped")

func enhanced(code int) string {
	return strconv.Itoa(code/100) + ".0.0"
}
