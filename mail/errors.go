package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"regexp"
	"strings"
	"syscall"

	gomail "github.com/wneessen/go-mail"
)

// Stages at which a send can fail, as reported in SendError.Stage. The caller uses them as
// a metrics label, so the set is small and stable.
const (
	// StageMessage: the Message itself is invalid (bad address, no body...), or it has a
	// non-ASCII address and the server does not offer SMTPUTF8. Nothing was sent.
	StageMessage = "message"
	// StageConnect: TCP connect, the server greeting or EHLO failed.
	StageConnect = "connect"
	// StageTLS: STARTTLS was required but not offered, or the TLS handshake failed
	// (including implicit TLS for tls=ssl).
	StageTLS = "tls"
	// StageAuth: SMTP AUTH failed or was impossible (no common mechanism).
	StageAuth = "auth"
	// StageMailFrom: the server refused MAIL FROM.
	StageMailFrom = "mail_from"
	// StageRcptTo: the server refused the recipient.
	StageRcptTo = "rcpt_to"
	// StageData: the server refused DATA or the message content, or the transfer broke off.
	StageData = "data"
	// StageTimeout: Config.Timeout or the caller's context deadline expired.
	StageTimeout = "timeout"
	// StageCanceled: the caller's context was canceled.
	StageCanceled = "canceled"
	// StageClosed: the Sender was closed.
	StageClosed = "closed"
)

// ErrClosed is wrapped by the SendError returned when the Sender has been closed.
var ErrClosed = errors.New("sender is closed")

// SendError describes a failed send or check. Its message names the stage and the SMTP reply
// code, never the subject, the body or the recipient address.
type SendError struct {
	// Stage is one of the Stage* constants.
	Stage string
	// Temporary reports whether retrying later may succeed: 4xx replies, network failures
	// and timeouts are temporary; 5xx replies, TLS and authentication problems and invalid
	// messages are not.
	Temporary bool
	// Code is the SMTP reply code, or 0 when the failure was not an SMTP reply.
	Code int
	// Err is the sanitized cause.
	Err error
	// MaybeDelivered reports that the whole message, its final "." included, was handed to
	// the server and the send then failed without the server's reply to it (a timeout, a
	// cancellation or a lost connection): the server may have accepted the message and it
	// may be delivered. A send that failed earlier, or that the server answered with a
	// refusal, was not delivered. As far as the client can tell: a connection that broke
	// while the last bytes were being written counts as handed over.
	MaybeDelivered bool
}

// Error implements error.
func (e *SendError) Error() string {
	kind := "permanent"
	if e.Temporary {
		kind = "temporary"
	}
	what := e.Stage + " failed"
	switch e.Stage {
	case StageTimeout, StageCanceled, StageClosed:
		what = e.Stage
	}
	if e.Err == nil {
		return fmt.Sprintf("mail: %s (%s)", what, kind)
	}
	return fmt.Sprintf("mail: %s (%s): %v", what, kind, e.Err)
}

// Unwrap returns the cause.
func (e *SendError) Unwrap() error { return e.Err }

// Stage returns the stage of a *SendError in err's chain, or "" when there is none (nil err
// or an error that did not come from this package).
func Stage(err error) string {
	var se *SendError
	if errors.As(err, &se) {
		return se.Stage
	}
	return ""
}

// IsTemporary reports whether err carries a *SendError marked temporary.
func IsTemporary(err error) bool {
	var se *SendError
	return errors.As(err, &se) && se.Temporary
}

// stageError tags an error produced while dialling with the stage it belongs to. It lets
// the dial function tell connect failures from implicit-TLS handshake failures through
// go-mail, which returns dial errors unwrapped.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// replyError is a sanitized SMTP reply: the code and, only where no user data was involved,
// the server's text.
type replyError struct {
	what string
	code int
	text string
}

func (e *replyError) Error() string {
	if e.text == "" {
		return fmt.Sprintf("%s: server replied %d", e.what, e.code)
	}
	return fmt.Sprintf("%s: server replied %d %s", e.what, e.code, e.text)
}

// enhancedCode is the enhanced status code (RFC 3463) that starts an SMTP reply's text.
var enhancedCode = regexp.MustCompile(`^[245]\.\d{1,3}\.\d{1,3}\b`)

// newSetupError classifies a failure of the connection set-up (dial, greeting, EHLO,
// STARTTLS, AUTH), given the stage the set-up was in. Those stages involve no user data, so
// the server's reply text is kept, except at AUTH, whose refused line holds the password.
func newSetupError(stage string, err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	var tagged *stageError
	if errors.As(err, &tagged) {
		stage = tagged.stage
	}
	var tpe *textproto.Error
	if errors.As(err, &tpe) {
		text := clip(tpe.Msg)
		if stage == StageAuth {
			// A server may quote the AUTH line it refuses, and that line holds the password
			// (base64 is no cover): only the enhanced status code (5.7.8) is kept.
			text = enhancedCode.FindString(text)
		}
		return &SendError{
			Stage:     stage,
			Temporary: tpe.Code >= 400 && tpe.Code < 500,
			Code:      tpe.Code,
			Err:       &replyError{what: stageVerb(stage), code: tpe.Code, text: text},
		}
	}
	return &SendError{Stage: stage, Temporary: setupTemporary(stage, err), Err: tlsHint(clippedError{err})}
}

// maxReplyText bounds the server's words kept in an error: go-mail quotes whole reply lines in
// its errors, and a server may send lines of any length (up to replyLimit).
const maxReplyText = 500

// clip cuts s to maxReplyText bytes (on a character boundary), marking the cut with "...".
func clip(s string) string {
	if len(s) <= maxReplyText {
		return s
	}
	return strings.ToValidUTF8(s[:maxReplyText], "") + "..."
}

// clippedError is err with its text clipped; errors.Is and As still see err.
type clippedError struct{ err error }

func (e clippedError) Error() string { return clip(e.err.Error()) }
func (e clippedError) Unwrap() error { return e.err }

// setupTemporary decides whether a set-up failure without an SMTP reply code may go away by
// itself: network trouble may, certificate and policy problems will not.
func setupTemporary(stage string, err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr),
		errors.As(err, &invalid):
		return false
	case stage == StageConnect:
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

func stageVerb(stage string) string {
	switch stage {
	case StageConnect:
		return "greeting/EHLO"
	case StageTLS:
		return "STARTTLS"
	case StageAuth:
		return "AUTH"
	case StageMailFrom:
		return "MAIL FROM"
	case StageRcptTo:
		return "RCPT TO"
	case StageData:
		return "DATA"
	}
	return stage
}

// newTransactionError classifies an error returned by go-mail's SendWithSMTPClient. go-mail's
// own SendError text lists the recipients and the Message-ID, so only its reason, code and
// enhanced status code are kept.
func newTransactionError(err error) *SendError {
	var gse *gomail.SendError
	if !errors.As(err, &gse) {
		return &SendError{Stage: StageData, Temporary: true, Err: errors.New("sending message failed")}
	}
	stage := StageData
	switch gse.Reason {
	case gomail.ErrSMTPMailFrom:
		stage = StageMailFrom
	case gomail.ErrSMTPRcptTo:
		stage = StageRcptTo
	case gomail.ErrConnCheck:
		stage = StageConnect
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
		return &SendError{Stage: StageMessage, Err: errors.New(gse.Reason.String())}
	}
	code := gse.ErrorCode()
	if code == 0 {
		// No reply code: the connection broke (or NOOP failed); worth retrying later. At the
		// end of DATA the message was out, and only the reply is missing.
		return &SendError{Stage: stage, Temporary: true, MaybeDelivered: gse.Reason == gomail.ErrSMTPDataClose,
			Err: fmt.Errorf("%s: connection failed", stageVerb(stage))}
	}
	text := gse.EnhancedStatusCode()
	return &SendError{
		Stage:     stage,
		Temporary: code >= 400 && code < 500,
		Code:      code,
		Err:       &replyError{what: stageVerb(stage), code: code, text: text},
	}
}

// newContextError reports that ctx ended while the send was at stage at.
func newContextError(ctx context.Context, at string) *SendError {
	cause := context.Cause(ctx)
	if cause == nil {
		// An I/O deadline expired just before the context's own timer.
		cause = context.DeadlineExceeded
	}
	stage := StageTimeout
	if errors.Is(cause, context.Canceled) {
		stage = StageCanceled
	}
	return &SendError{Stage: stage, Temporary: true, Err: fmt.Errorf("during %s: %w", at, cause)}
}

// isStale reports whether err means a reused pooled connection was dead before anything of
// the message was accepted, so the send may safely be retried on a fresh connection.
func isStale(err error) bool {
	var gse *gomail.SendError
	if !errors.As(err, &gse) {
		return false
	}
	switch gse.Reason {
	case gomail.ErrConnCheck:
		return true
	case gomail.ErrSMTPMailFrom:
		// No reply at all (EOF, reset) or 421 "closing transmission channel".
		code := gse.ErrorCode()
		return code == 0 || code == 421
	}
	return false
}

// Cause is a short, fixed description of the failure, safe to show to anyone (readiness
// probes): "connect refused", "connect failed", "tls failed", "auth failed", "timeout",
// "closed", or "smtp error" for a refusal later in the dialogue. The SMTP server's own reply
// is not part of it.
func (e *SendError) Cause() string {
	switch e.Stage {
	case StageConnect:
		if errors.Is(e.Err, syscall.ECONNREFUSED) {
			return "connect refused"
		}
		return "connect failed"
	case StageTLS:
		return "tls failed"
	case StageAuth:
		return "auth failed"
	case StageTimeout, StageCanceled:
		return "timeout"
	case StageClosed:
		return "closed"
	}
	return "smtp error"
}
