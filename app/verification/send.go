package verification

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/store"
)

// Limits on the one-line fields of a mail.
const (
	maxSubject = 998 // RFC 5322 line length
	maxName    = 256
)

// sendRequest is the body of POST /verification/email.
type sendRequest struct {
	credentials
	EmailData *emailData `json:"email_data"`
}

// emailData is the mail the app wrote. Pointers tell a missing field from an empty one.
type emailData struct {
	Subject      *string `json:"subject"`
	ToEmail      *string `json:"to_email"`
	HTML         *string `json:"html"`
	Text         *string `json:"text"`
	FromName     *string `json:"from_name"`
	ToName       *string `json:"to_name"`
	ReplyToEmail *string `json:"reply_to_email"`
	ReplyToName  *string `json:"reply_to_name"`
}

// draft is a validated email_data: the mail to send once the code is known.
type draft struct {
	to  string // normalised recipient, as identity records keep it
	key string // its canonical form (address.Canonical): the key of the code and send limits
	msg mail.Message
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// oneLine rejects header values with control characters (CR and LF would forge headers).
func oneLine(field, v string, limit int) *apierr.Error {
	if len(v) > limit {
		return apierr.InvalidBody.Msg("email_data.%s is longer than %d bytes", field, limit)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return apierr.InvalidBody.Msg("email_data.%s must be one line without control characters", field)
	}
	return nil
}

// validate checks d (see doc.go for the rules). legacy apps' reply-to fields are ignored.
func (h *Handler) validate(d *emailData, legacy bool) (draft, *apierr.Error) {
	if err := h.checkContent(d); err != nil {
		return draft{}, err
	}
	to, key, rcpt, err := recipient(*d.ToEmail)
	if err != nil {
		return draft{}, err
	}
	out := draft{to: to, key: key, msg: mail.Message{
		FromName: str(d.FromName), To: rcpt, ToName: str(d.ToName),
		Subject: *d.Subject, HTML: str(d.HTML), Text: str(d.Text),
	}}
	if legacy {
		return out, nil
	}
	if err := setReplyTo(&out.msg, d); err != nil {
		return draft{}, err
	}
	return out, nil
}

// checkContent checks what d must hold (a subject, a recipient, html or text), the placeholder
// in html and text, and the one-line fields, in that order: the first problem is the answer.
func (h *Handler) checkContent(d *emailData) *apierr.Error {
	if d == nil {
		return apierr.InvalidBody.Msg("email_data is required")
	}
	if d.Subject == nil || strings.TrimSpace(*d.Subject) == "" {
		return apierr.InvalidBody.Msg("email_data.subject is required")
	}
	if d.ToEmail == nil {
		return apierr.InvalidBody.Msg("email_data.to_email is required")
	}
	html, text := str(d.HTML), str(d.Text)
	if html == "" && text == "" {
		return apierr.InvalidBody.Msg("email_data needs html, text or both")
	}
	if err := h.checkBodies(html, text); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		v     string
		limit int
	}{
		{"subject", *d.Subject, maxSubject}, {"from_name", str(d.FromName), maxName},
		{"to_name", str(d.ToName), maxName}, {"reply_to_name", str(d.ReplyToName), maxName},
	} {
		if err := oneLine(f.name, f.v, f.limit); err != nil {
			return err
		}
	}
	return nil
}

// checkBodies checks that html and text, those not empty, hold a placeholder, and that html
// is HTML that mail clients render as written (checkHTML).
func (h *Handler) checkBodies(html, text string) *apierr.Error {
	names := strings.Join(h.tmpl.names, " or ")
	if html != "" {
		if !h.tmpl.has(html) {
			return apierr.InvalidBody.Msg("email_data.html must contain the placeholder %s", names)
		}
		if err := checkHTML(html); err != nil {
			return apierr.InvalidBody.Msg("email_data.html is not valid HTML: %s", strings.TrimPrefix(err.Error(), "html: "))
		}
	}
	if text != "" && !h.tmpl.has(text) {
		return apierr.InvalidBody.Msg("email_data.text must contain the placeholder %s", names)
	}
	return nil
}

// recipient checks to_email and returns it normalised (as identity records keep it), its
// canonical form (the key of its code and send limits) and the address the mail goes to.
func recipient(toEmail string) (to, key, rcpt string, _ *apierr.Error) {
	to, err := address.Normalize(toEmail)
	// Codes and send limits are kept under the canonical address (case-folded, punycoded
	// domain); the mail goes to the local part as written at that same domain, not one the
	// relay maps, and a domain that maps to no valid domain ("x.\u200b" to "x.") is refused.
	// The canonical form is computed once, here, for both.
	if err == nil {
		key, rcpt = address.CanonicalAndDeliverable(to)
		_, err = address.Normalize(rcpt)
	}
	if err != nil {
		return "", "", "", apierr.InvalidEmail.Msg("email_data.to_email is not a valid email address")
	}
	// The relay would deliver a domain literal, or a name it resolves on its own network, to
	// hosts inside it: only public domain names are mailed (address.Routable).
	if !address.Routable(rcpt) {
		return "", "", "", apierr.InvalidEmail.Msg("email_data.to_email must be at a public domain name (not an IP address, a single-label name such as localhost, or a .localhost name)")
	}
	return to, key, rcpt, nil
}

// setReplyTo puts d's reply-to address, checked, and name in msg; a reply-to name needs an
// address.
func setReplyTo(msg *mail.Message, d *emailData) *apierr.Error {
	if str(d.ReplyToEmail) != "" {
		rt, err := address.Normalize(*d.ReplyToEmail)
		if err == nil {
			// Its domain in ASCII too, so that only a non-ASCII local part needs SMTPUTF8.
			rt = address.Deliverable(rt)
			_, err = address.Normalize(rt)
		}
		if err != nil {
			return apierr.InvalidEmail.Msg("email_data.reply_to_email is not a valid email address")
		}
		msg.ReplyTo, msg.ReplyToName = rt, str(d.ReplyToName)
	} else if str(d.ReplyToName) != "" {
		return apierr.InvalidBody.Msg("email_data.reply_to_name requires email_data.reply_to_email")
	}
	return nil
}

// Send: POST /verification/email. It issues a code for email_data.to_email and mails it inside
// the app's subject, html and text. Answers 200 {}.
func (h *Handler) Send(c *fiber.Ctx) error {
	var req sendRequest
	legacy := false
	app, err := h.resolve(c, &req, &req.credentials, func(a *apps.App) {
		if a.Options.LegacyErrors {
			legacy = true
			fibererr.SetStyle(c, apierr.StyleFlat)
		}
	})
	if err != nil {
		return err
	}
	d, verr := h.validate(req.EmailData, legacy)
	if verr != nil {
		return verr
	}
	if app.Options.RegisteredUsersOnly {
		if err := h.checkRegistered(app, d.to); err != nil {
			return err
		}
	}

	code, err := generateCode()
	if err != nil {
		return apierr.Internal(err)
	}
	key := d.key
	in := h.issue(app, key, code)
	lim := h.sendLimits(h.proxies.Of(c))
	in.Limits = &lim
	issued, err := h.store.IssueCode(in)
	var te *store.ThrottleError
	if errors.As(err, &te) {
		return h.throttled(te)
	}
	if err != nil {
		return apierr.Internal(err)
	}

	msg := d.msg
	msg.Subject = h.tmpl.fill(msg.Subject, code)
	msg.HTML = h.tmpl.fill(msg.HTML, code)
	msg.Text = h.tmpl.fill(msg.Text, code)
	if err := h.mailer.Send(c.UserContext(), msg); err != nil {
		return h.sendFailed(app, key, issued.ID, lim, err)
	}
	h.metrics.sends.Inc()
	return c.JSON(fiber.Map{})
}

// checkRegistered enforces the app option registered_users_only.
func (h *Handler) checkRegistered(app *apps.App, email string) error {
	r, err := h.store.Record(app.ID, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierr.NoUnlockEmail.New()
	case err != nil:
		return apierr.Internal(err)
	case !r.Registered:
		return apierr.NoUnlockKey.New()
	}
	return nil
}

// sendFailed withdraws the code whose mail was not sent and answers send_email_error naming the
// SMTP stage that failed. When the mail never reached the SMTP server (see refundable), the send
// also gives back its address, app and client-IP counts: an SMTP outage does not use up quotas.
// When the whole mail was out and only the server's reply to it is missing (a timeout or a lost
// connection after the final "." of DATA: mail.SendError.MaybeDelivered), the mail may be
// delivered: the send keeps its counts and its code stays valid, so that a user who got it can
// still use it.
func (h *Handler) sendFailed(app *apps.App, email string, id uint64, lim store.SendLimits, err error) error {
	stage := mail.Stage(err)
	if stage == "" {
		stage = "unknown"
	}
	h.metrics.failures.WithLabelValues(stage).Inc()
	var se *mail.SendError
	maybeDelivered := errors.As(err, &se) && se.MaybeDelivered
	var werr error
	switch {
	case maybeDelivered:
	case refundable(err):
		werr = h.store.WithdrawSend(app.ID, email, id, lim)
	default:
		werr = h.store.WithdrawSend(app.ID, email, id, store.SendLimits{})
	}
	if werr != nil && !errors.Is(werr, store.ErrAppDeleted) {
		// (An app deleted while its mail was out took its code and counters with it.)
		// The code stays valid though its mail was never sent: nobody knows it, so this is
		// only a leftover, but the operator should know the store failed.
		h.log.Error("withdraw unsent code", "app_id", apps.FormatID(app.ID), "err", werr)
	}
	msg := fmt.Sprintf("the mail could not be sent: the SMTP server failed at stage %q", stage)
	if se != nil {
		if se.Code != 0 {
			msg += fmt.Sprintf(" (reply %d)", se.Code)
		}
		if maybeDelivered {
			msg += "; the whole mail was out before its reply went missing, so it may still arrive, and its code stays valid"
		} else if se.Temporary {
			msg += "; a retry may help"
		}
	}
	return &apierr.Error{Code: apierr.SendEmailError, Message: msg, Cause: err}
}

// refundable reports whether a failed send never reached a working SMTP server, so that it
// should not count against the send limits: the connection, TLS or authentication failed, the
// send timed out or was cancelled before the whole mail was out, or the server answered with a
// temporary (4xx) refusal. A
// permanent refusal (5xx: a rejected recipient or content) still counts, so refused addresses
// cannot be used to hammer the SMTP server.
func refundable(err error) bool {
	var se *mail.SendError
	if !errors.As(err, &se) {
		return true
	}
	if se.MaybeDelivered {
		return false
	}
	switch se.Stage {
	case mail.StageConnect, mail.StageTLS, mail.StageAuth, mail.StageTimeout, mail.StageCanceled, mail.StageClosed:
		return true
	}
	return se.Temporary
}
