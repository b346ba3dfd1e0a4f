package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// deadlineBackstop is how long after the send's own deadline go-mail's I/O deadlines expire.
const deadlineBackstop = time.Second

// Sender sends Messages over a small pool of reused SMTP connections. It is safe for
// concurrent use.
type Sender struct {
	cfg       Config
	log       *slog.Logger
	tlsConfig *tls.Config
	// client holds go-mail's per-server settings; it dials the pooled connections and runs
	// the SMTP transaction on them (SendWithSMTPClient), each used by one send at a time.
	client *gomail.Client
	pool   *pool
	// dialAddr, when set (tests only), is dialled instead of Host:Port, so that a test can
	// reach a local server under a non-loopback host name.
	dialAddr string
}

// New validates cfg (after applying the defaults for PoolSize and IdleTimeout) and returns
// a Sender. It does not connect: call Check for that. A nil logger discards logs.
func New(cfg Config, logger *slog.Logger) (*Sender, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mail: invalid config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tlsConfig, err := tlsConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid config: %w", err)
	}
	if cfg.TLSSkipVerify && cfg.TLS != TLSNone {
		logger.Warn(skipVerifyWarning)
	}
	s := &Sender{cfg: cfg, log: logger, tlsConfig: tlsConfig}
	opts := []gomail.Option{
		gomail.WithPort(cfg.Port),
		// go-mail's per-command deadline is only a backstop: the kill switch (Timeout and
		// ctx) fires first, so that expiries are reported as StageTimeout.
		gomail.WithTimeout(cfg.Timeout + deadlineBackstop),
		// STARTTLS and AUTH are done by dial, per cfg.TLS; go-mail only dials and greets.
		gomail.WithTLSPolicy(gomail.NoTLS),
		gomail.WithDialContextFunc(s.dialContext),
		// No NOOP before each message and before each RSET: two round trips saved per
		// send. A pooled connection the server closed is detected at MAIL FROM instead (no
		// reply, or 421), before any of the message is sent, and the send is retried.
		gomail.WithoutNoop(),
	}
	if cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(cfg.HELO))
	}
	client, err := gomail.NewClient(cfg.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("mail: creating smtp client: %w", err)
	}
	s.client = client
	s.pool = newPool(cfg.PoolSize, cfg.IdleTimeout, s.dial)
	return s, nil
}

// Send delivers m. It is bounded by Config.Timeout and ctx. On failure it returns a
// *SendError naming the stage. It retries once, on a fresh connection, only when a reused
// connection turns out to have been closed by the server before the message was started.
func (s *Sender) Send(ctx context.Context, m Message) error {
	start := time.Now()
	domain := domainOf(m.To)
	msg, err := m.build(s.cfg)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err = s.send(ctx, msg, domain, m.needsSMTPUTF8(s.cfg))
		cancel()
	}
	if err != nil {
		se := asSendError(err)
		s.log.Debug("mail send failed", "rcpt_domain", domain, "stage", se.Stage,
			"temporary", se.Temporary, "code", se.Code, "duration", time.Since(start))
		return se
	}
	s.log.Debug("mail sent", "rcpt_domain", domain, "duration", time.Since(start))
	return nil
}

func (s *Sender) send(ctx context.Context, msg *gomail.Msg, domain string, needsUTF8 bool) error {
	fresh := false
	for {
		c, reused, err := s.pool.get(ctx, fresh)
		if err != nil {
			return err
		}
		if ok, _ := c.smtp.Extension("SMTPUTF8"); needsUTF8 && !ok {
			// RFC 6531: a non-ASCII address goes only to a server that offers SMTPUTF8. Sent
			// anyway, each server does its own thing with the bytes (refuses, re-encodes, or
			// delivers to another mailbox). Nothing was sent; the connection stays usable.
			s.pool.put(c)
			return &SendError{Stage: StageMessage, Err: errNoSMTPUTF8}
		}
		if d, ok := ctx.Deadline(); ok {
			// The previous send's deadline may have passed while the connection sat idle.
			_ = c.raw.SetDeadline(d.Add(deadlineBackstop))
		}
		k := &killSwitch{raw: c.raw}
		stop := k.arm(ctx)
		err = s.client.SendWithSMTPClient(c.smtp, msg)
		killed := !stop()
		if msg.IsDelivered() {
			// Accepted by the server; a failure of the trailing RSET only costs the connection.
			if err != nil || killed {
				s.pool.discard(c)
			} else {
				s.pool.put(c)
			}
			return nil
		}
		s.pool.discard(c)
		if err == nil {
			// Not delivered without an error: only possible when the switch fired.
			return newContextError(ctx, StageData)
		}
		if ctx.Err() != nil {
			// The kill switch closed the connection: the transaction's error tells where the
			// send was, and whether the whole message was out already.
			te := newTransactionError(err)
			ce := newContextError(ctx, te.Stage)
			ce.MaybeDelivered = te.MaybeDelivered
			return ce
		}
		if reused && !fresh && isStale(err) {
			s.log.Debug("pooled smtp connection was closed by the server; redialling",
				"rcpt_domain", domain)
			fresh = true
			continue
		}
		return newTransactionError(err)
	}
}

// Check connects to the server with a fresh connection (greeting, EHLO, STARTTLS per
// Config.TLS, AUTH when configured), issues RSET and QUIT. It fails at StageMessage when
// Config.From is not ASCII and the server does not offer SMTPUTF8 (every send would). It is meant for start-up and
// readiness probes and is bounded by Config.Timeout and ctx.
func (s *Sender) Check(ctx context.Context) error {
	if s.pool.isClosed() {
		return &SendError{Stage: StageClosed, Err: ErrClosed}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	k := &killSwitch{raw: c.raw}
	stop := k.arm(ctx)
	err = c.smtp.Reset()
	if !stop() || err != nil {
		c.abort()
		if ctx.Err() != nil {
			return newContextError(ctx, StageConnect)
		}
		return newSetupError(StageConnect, err)
	}
	if ok, _ := c.smtp.Extension("SMTPUTF8"); !ok && (Message{}).needsSMTPUTF8(s.cfg) {
		// Every send would fail (a non-ASCII mail.from): say so at start-up, not at the first send.
		c.quit()
		return &SendError{Stage: StageMessage, Err: errNoSMTPUTF8}
	}
	c.quit()
	return nil
}

// Close closes the idle connections; connections in use are closed when their send ends.
// Sends and checks after Close fail with StageClosed. It always returns nil.
func (s *Sender) Close() error {
	s.pool.close()
	return nil
}

// asSendError makes sure every error returned by Send is a *SendError.
func asSendError(err error) *SendError {
	if se, ok := err.(*SendError); ok {
		return se
	}
	return &SendError{Stage: StageData, Temporary: true, Err: err}
}
