package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wneessen/go-mail/smtp"

	"github.com/idvault/idvault/app/loopback"
)

// conn is one SMTP connection: go-mail's protocol client plus the raw TCP connection
// underneath it, which is what gets closed to abort blocked I/O.
type conn struct {
	smtp     *smtp.Client
	raw      net.Conn
	lastUsed time.Time
}

// killSwitch closes a connection when a context ends, so that no SMTP read or write can
// outlive Config.Timeout or the caller's context. The connection may be attached after
// the switch was armed (while dialling).
type killSwitch struct {
	mu    sync.Mutex
	raw   net.Conn
	fired bool
}

func (k *killSwitch) attach(raw net.Conn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.raw = raw
	if k.fired {
		_ = raw.Close()
	}
}

func (k *killSwitch) fire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fired = true
	if k.raw != nil {
		_ = k.raw.Close()
	}
}

// arm fires the switch when ctx ends; the returned stop reports false if it already fired.
func (k *killSwitch) arm(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, k.fire)
}

// killSwitchKey carries the dial attempt's *killSwitch through go-mail to dialContext.
type killSwitchKey struct{}

// dialContext is installed as go-mail's DialContextFunc. It connects to the configured
// address, performs the implicit TLS handshake for tls=ssl, and tags failures with their
// stage. It returns the *tls.Conn itself (not a wrapper) so go-mail knows the session is
// encrypted.
func (s *Sender) dialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	if s.dialAddr != "" {
		addr = s.dialAddr
	}
	raw, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, &stageError{stage: StageConnect, err: err}
	}
	if k, ok := ctx.Value(killSwitchKey{}).(*killSwitch); ok {
		k.attach(raw)
	}
	limited := &replyLimitConn{Conn: raw}
	if s.cfg.TLS != TLSImplicit {
		return limited, nil
	}
	tc := tls.Client(limited, s.tlsConfig)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, &stageError{stage: StageTLS, err: err}
	}
	return tc, nil
}

// replyLimit is the most the server may send between two writes of the client: far more than
// any SMTP reply or TLS handshake flight (Go caps one handshake message at 64 KiB), and little
// enough memory. go-mail's reply reader has no bound of its own: it keeps reading a line, and
// the lines of a multi-line reply, until they end, so a server (or, before STARTTLS, anyone on
// the path) streaming an endless reply made idvault hold gigabytes until the send timed out.
const replyLimit = 256 << 10

// errReplyTooLong is the read error once the server exceeds replyLimit.
var errReplyTooLong = errors.New("the smtp server sent more than 256 KiB without waiting for a command (an endless reply)")

// replyLimitConn is the connection under go-mail's SMTP client (and under TLS, which then
// counts encrypted bytes): a read fails once replyLimit bytes came in since the last write.
// SMTP is a dialogue, so every reply follows a write of the client (the greeting follows the
// connect).
type replyLimitConn struct {
	net.Conn
	read atomic.Int64
}

func (c *replyLimitConn) Read(p []byte) (int, error) {
	left := replyLimit - c.read.Load()
	if left <= 0 {
		return 0, errReplyTooLong
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *replyLimitConn) Write(p []byte) (int, error) {
	c.read.Store(0)
	return c.Conn.Write(p)
}

// dial opens and prepares a connection: TCP (+TLS for ssl), greeting and EHLO via go-mail,
// then STARTTLS per Config.TLS and AUTH when credentials are configured. It gives up when
// ctx ends.
func (s *Sender) dial(ctx context.Context) (*conn, error) {
	k := &killSwitch{}
	stop := k.arm(ctx)
	c, stage, err := s.dialSteps(context.WithValue(ctx, killSwitchKey{}, k), k)
	fired := !stop()
	if err != nil || fired {
		k.mu.Lock()
		if k.raw != nil {
			_ = k.raw.Close()
		}
		k.mu.Unlock()
		if ctx.Err() != nil || isTimeout(err) {
			return nil, newContextError(ctx, stage)
		}
		return nil, newSetupError(stage, err)
	}
	_, encrypted := c.smtp.TLSConnectionState()
	s.log.Debug("smtp connection opened", "server", net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)),
		"tls", encrypted)
	return c, nil
}

func (s *Sender) dialSteps(ctx context.Context, k *killSwitch) (*conn, string, error) {
	// go-mail dials (through dialContext), reads the greeting and sends EHLO. Its client is
	// configured with NoTLS and no AUTH so that both are done below, stage by stage.
	client, err := s.client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return nil, StageConnect, err
	}
	k.mu.Lock()
	c := &conn{smtp: client, raw: k.raw}
	k.mu.Unlock()

	if s.cfg.TLS == TLSMandatory || s.cfg.TLS == TLSOpportunistic {
		offered, _ := client.Extension("STARTTLS")
		switch {
		case offered:
			if err := client.StartTLS(s.tlsConfig); err != nil {
				return nil, StageTLS, err
			}
		case s.cfg.TLS == TLSMandatory:
			return nil, StageTLS, errors.New("server does not offer STARTTLS (mail.tls is mandatory)")
		}
	}
	if s.cfg.Username != "" {
		if _, encrypted := client.TLSConnectionState(); !encrypted && s.cfg.TLS != TLSNone && !loopback.IsHost(s.cfg.Host) {
			// opportunistic fell back to plain SMTP: credentials never go out unencrypted
			// unless mail.tls is none, written explicitly (and allowed by Validate).
			return nil, StageAuth, errors.New("refusing SMTP AUTH over an unencrypted connection to a non-loopback host (the server did not offer STARTTLS; mail.tls is " + string(s.cfg.TLS) + ")")
		}
		if err := s.authenticate(client); err != nil {
			return nil, StageAuth, err
		}
	}
	return c, StageConnect, nil
}

// authenticate runs SMTP AUTH with the first mechanism the server offers among PLAIN, LOGIN
// and CRAM-MD5. PLAIN and LOGIN refuse to send the password over an unencrypted session to a
// non-loopback host, unless mail.tls is "none" (an explicit choice of plaintext).
func (s *Sender) authenticate(client *smtp.Client) error {
	ok, offered := client.Extension("AUTH")
	if !ok {
		return errors.New("server does not offer AUTH")
	}
	mechs := strings.Fields(strings.ToUpper(offered))
	has := func(m string) bool {
		for _, x := range mechs {
			if x == m {
				return true
			}
		}
		return false
	}
	allowPlaintext := s.cfg.TLS == TLSNone
	var a smtp.Auth
	switch {
	case has("PLAIN"):
		a = smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.cfg.Host, allowPlaintext)
	case has("LOGIN"):
		a = smtp.LoginAuth(s.cfg.Username, s.cfg.Password, s.cfg.Host, allowPlaintext)
	case has("CRAM-MD5"):
		a = smtp.CRAMMD5Auth(s.cfg.Username, s.cfg.Password)
	default:
		return errors.New("no supported AUTH mechanism offered (PLAIN, LOGIN, CRAM-MD5)")
	}
	if err := client.Auth(a); err != nil {
		return err
	}
	return nil
}

// quit ends a connection politely (QUIT, bounded by a short deadline) and closes it.
func (c *conn) quit() {
	_ = c.raw.SetDeadline(time.Now().Add(2 * time.Second))
	_ = c.smtp.Quit()
	_ = c.raw.Close()
}

// abort closes a connection without talking to the server (its state is unknown).
func (c *conn) abort() {
	_ = c.raw.Close()
}

// isTimeout reports whether err is an expired I/O deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
