package verification_test

import (
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/fakeclock"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/app/verification"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

// recorder is a Mailer that keeps every message handed to the real sender, sent or not, so a
// test knows the code of a mail that failed.
type recorder struct {
	next verification.Mailer
	mu   sync.Mutex
	msgs []mail.Message
	// before, when set, runs before each mail is handed on: what happens while a send is in
	// flight (its code already stored).
	before func()
}

func (r *recorder) Send(ctx context.Context, m mail.Message) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	before := r.before
	r.mu.Unlock()
	if before != nil {
		before()
	}
	return r.next.Send(ctx, m)
}

// last returns the last message handed to the sender.
func (r *recorder) last(t testing.TB) mail.Message {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.msgs, "no mail was attempted")
	return r.msgs[len(r.msgs)-1]
}

// setup is what newEnv builds from; options change it.
type setup struct {
	cfg     config.Verification
	mail    mail.Config
	smtp    mailtest.Options
	proxies []string
}

// env is a verification API over a real store, a real mail sender and an in-process SMTP server.
type env struct {
	*apptest.Env
	SMTP    *mailtest.Server
	Mail    *recorder
	Handler *verification.Handler
	App     *fiber.App
	Clock   *fakeclock.Clock
	setup   setup
}

// newEnv builds an env; opts adjust the configuration before anything is built.
func newEnv(t testing.TB, opts ...func(*setup)) *env {
	t.Helper()
	s := setup{cfg: config.DefaultVerification()}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	srv := mailtest.Start(t, s.smtp)
	s.mail.Host, s.mail.Port, s.mail.TLS = srv.Host(), srv.Port(), mail.TLSNone
	s.mail.From, s.mail.FromName, s.mail.HELO = "idvault@idvault.test", "idvault", "idvault.test"
	if s.mail.Timeout == 0 {
		s.mail.Timeout = 5 * time.Second
	}
	base := apptest.New(t)
	clk := fakeclock.New()
	base.Store.SetClock(clk.Now)
	e := &env{Env: base, SMTP: srv, Clock: clk, setup: s}
	e.build(t, base.Store)
	return e
}

// build (re)makes the handler and the app over st, with a fresh metrics registry.
func (e *env) build(t testing.TB, st *store.Store) {
	t.Helper()
	e.Prom = server.NewRegistry()
	sender, err := mail.New(e.setup.mail, e.Log)
	require.NoError(t, err)
	t.Cleanup(func() { sender.Close() })
	e.Mail = &recorder{next: sender}
	h, err := verification.New(verification.Deps{
		Apps: e.Apps, Store: st, Mailer: e.Mail, Config: e.setup.cfg, TrustedProxies: e.setup.proxies,
		CodeKey: e.MasterKey.Derive("verification code hmac"), Metrics: e.Prom, Logger: e.Log,
	})
	require.NoError(t, err)
	e.Handler = h
	e.App = e.Server(func(d *server.Deps) {
		d.Verification = h
		d.Server.TrustedProxies = e.setup.proxies
	})
}

// createApp makes an app with options.
func (e *env) createApp(t testing.TB, test bool, opts store.AppOptions) apps.Created {
	t.Helper()
	c, err := e.Apps.Create(e.NextAppName("verification test"), test, opts)
	require.NoError(t, err)
	return c
}

func creds(a apps.Created) map[string]any {
	return map[string]any{"app_id": apps.FormatID(a.App.ID), "auth_token": a.AuthToken}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// emailData is a valid email_data for to.
func emailData(to string) map[string]any {
	return map[string]any{
		"subject":  "Your code: SERVICE_VERIFICATION_CODE",
		"to_email": to,
		"text":     "code=SERVICE_VERIFICATION_CODE;",
		"html":     "<p>Your code: <b>code=SERVICE_VERIFICATION_CODE;</b></p>",
	}
}

func (e *env) send(t testing.TB, a apps.Created, data map[string]any, headers ...string) apptest.Response {
	t.Helper()
	return apptest.Do(t, e.App, "POST", "/verification/email", with(creds(a), "email_data", data), headers...)
}

func (e *env) code(t testing.TB, a apps.Created, email string) apptest.Response {
	t.Helper()
	return apptest.Do(t, e.App, "POST", "/verification/email/code", with(creds(a), "email", email))
}

func (e *env) verify(t testing.TB, a apps.Created, email, code string) apptest.Response {
	t.Helper()
	return apptest.Do(t, e.App, "POST", "/verification/email/verify",
		with(creds(a), "email", email, "verification_code", code))
}

// sendOK sends a code to to and returns it, read from the mail the SMTP server received.
func (e *env) sendOK(t testing.TB, a apps.Created, to string) string {
	t.Helper()
	before := e.SMTP.MessageCount()
	r := e.send(t, a, emailData(to))
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	require.JSONEq(t, `{}`, string(r.Body))
	msgs := e.SMTP.Messages()
	require.Len(t, msgs, before+1)
	return codeIn(t, parseMail(t, msgs[len(msgs)-1].Data).Text)
}

// testCode reads a test app's code through /code.
func (e *env) testCode(t testing.TB, a apps.Created, email string) string {
	t.Helper()
	r := e.code(t, a, email)
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	var b struct {
		Code string `json:"verification_code"`
	}
	r.JSON(t, &b)
	require.Regexp(t, `^\d{8}$`, b.Code)
	return b.Code
}

var codeRE = regexp.MustCompile(`code=(\d{8});`)

// codeIn finds the code in a text rendered from the test templates.
func codeIn(t testing.TB, s string) string {
	t.Helper()
	m := codeRE.FindStringSubmatch(s)
	require.NotNil(t, m, "no code in %q", s)
	return m[1]
}

// parsedMail is a received message, decoded.
type parsedMail struct {
	Header  netmail.Header
	Subject string
	Text    string
	HTML    string
}

// parseMail decodes a raw message with its text and HTML parts.
func parseMail(t testing.TB, raw []byte) parsedMail {
	t.Helper()
	msg, err := netmail.ReadMessage(strings.NewReader(string(raw)))
	require.NoError(t, err)
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	out := parsedMail{Header: msg.Header, Subject: subject}
	var walk func(ct string, enc string, body io.Reader)
	walk = func(ct, enc string, body io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		require.NoError(t, err)
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				require.NoError(t, err)
				walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			}
		}
		text := decodeBody(t, enc, body)
		switch mt {
		case "text/plain":
			out.Text = text
		case "text/html":
			out.HTML = text
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return out
}

func decodeBody(t testing.TB, enc string, body io.Reader) string {
	t.Helper()
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	raw, err := io.ReadAll(body)
	require.NoError(t, err)
	return string(raw)
}

// verificationConfig is the default verification section.
func verificationConfig() config.Verification { return config.DefaultVerification() }
