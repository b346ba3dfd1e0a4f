package verification_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/store"
)

// A field of the wrong type is named as the request names it, never by an internal struct.
func TestWrongTypeNamesTheRequestField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	for field, body := range map[string]map[string]any{
		"app_id":     {"app_id": 42, "auth_token": a.AuthToken, "email": "x@example.com"},
		"auth_token": {"app_id": apps.FormatID(a.App.ID), "auth_token": []int{1}, "email": "x@example.com"},
	} {
		r := apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", body)
		require.Equal(t, "invalid_body", r.ErrorCode(t), field)
		var b struct {
			Error struct{ Message string } `json:"error"`
		}
		r.JSON(t, &b)
		require.Equal(t, field+" must be a string", b.Error.Message)
		require.NotContains(t, string(r.Body), "credentials")
	}
}

// Tanker's JavaScript functional tests post /verification/email/code with fetch and no header,
// so the JSON body arrives as text/plain;charset=UTF-8: every verification route reads it.
func TestVerificationAcceptsJSONSentAsTextPlain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	test, prod := e.createApp(t, true, store.AppOptions{}), e.createApp(t, false, store.AppOptions{})
	const ct = "text/plain;charset=UTF-8"
	r := apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", with(creds(test), "email", "js@example.com"), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	var got struct {
		Code string `json:"verification_code"`
	}
	r.JSON(t, &got)
	require.NotEmpty(t, got.Code)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email/verify",
		with(creds(test), "email", "js@example.com", "verification_code", got.Code), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email", with(creds(prod), "email_data", emailData("js@example.com")), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", with(creds(test), "email", "js2@example.com"))
	require.Equal(t, http.StatusOK, r.Status, "and application/json of course")
}

// Addresses that reach one mailbox share one code list, one lock and one send limit, whatever
// the case of the local part or the form (Unicode or punycode) of the domain.
func TestLimitsAndCodesUseTheCanonicalAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) { s.cfg.AddressSendLimit, s.cfg.MaxWrongAttempts = 3, 2 })
	prod := e.createApp(t, false, store.AppOptions{})
	e.sendOK(t, prod, "Victim@x.io")
	e.sendOK(t, prod, "victim@X.IO")
	c := e.sendOK(t, prod, "VICTIM@x.io")
	r := e.send(t, prod, emailData("vIcTiM@x.io"))
	require.Equal(t, "max_attempts_reached", r.ErrorCode(t), "one mailbox, one limit")
	require.Equal(t, "Victim@x.io", e.SMTP.Messages()[0].To[0], "the mail goes to the address as written")
	require.Equal(t, http.StatusOK, e.verify(t, prod, "victim@x.io", c).Status, "a code verifies under any case")

	e.sendOK(t, prod, "a@bücher.example")
	e.sendOK(t, prod, "A@xn--bcher-kva.example")
	e.sendOK(t, prod, "a@BÜCHER.example")
	require.Equal(t, "max_attempts_reached", e.send(t, prod, emailData("a@xn--bcher-kva.example")).ErrorCode(t))

	// Spellings a mail server maps to one domain (UTS #46): an invisible zero-width space or
	// soft hyphen, full-width letters. Each used to open a fresh limit on the same mailbox.
	e.sendOK(t, prod, "b@y.io\u200b")
	e.sendOK(t, prod, "b@y\u00ad.io")
	e.sendOK(t, prod, "b@ｙ.io")
	require.Equal(t, "max_attempts_reached", e.send(t, prod, emailData("b@y.io")).ErrorCode(t))

	test := e.createApp(t, true, store.AppOptions{})
	code := e.testCode(t, test, "Mixed@Case.io")
	require.Equal(t, code, e.testCode(t, test, "mixed@case.io"), "/code finds the same code")
	require.Equal(t, "invalid_verification_code", e.verify(t, test, "MIXED@case.io", "00000000").ErrorCode(t))
	require.Equal(t, "invalid_verification_code", e.verify(t, test, "mixed@case.io", "00000001").ErrorCode(t))
	require.Equal(t, "too_many_attempts", e.verify(t, test, "Mixed@Case.io", code).ErrorCode(t), "wrong codes count across cases")
}

// The mail goes to the domain its code is keyed under: the canonical ASCII form (UTS #46
// non-transitional, punycoded), the local part as written. Before, it went to the domain as
// the client wrote it, and the SMTP relay mapped that itself: a relay that maps the deviation
// characters the old (transitional) way delivers "victim@faß.de" to fass.de, another domain,
// whose owner then held a code that verifies victim@faß.de (xn--fa-hia.de).
func TestMailGoesToTheDomainTheCodeIsKeyedUnder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSMTPUTF8)
	prod := e.createApp(t, false, store.AppOptions{})
	for to, rcpt := range map[string]string{
		"Victim@faß.de":      "Victim@xn--fa-hia.de",
		"a@BÜCHER.example":   "a@xn--bcher-kva.example",
		"b@y.io\u200b":       "b@y.io",
		"c@ｙ.io":             "c@y.io",
		"d@Example.COM":      "d@example.com",
		"e@xn--fa-hia.de":    "e@xn--fa-hia.de",
		"Zoë@bücher.example": "Zoë@xn--bcher-kva.example",
	} {
		code := e.sendOK(t, prod, to)
		msgs := e.SMTP.Messages()
		got := msgs[len(msgs)-1]
		require.Equal(t, []string{rcpt}, got.To, "the envelope recipient for %q", to)
		require.Contains(t, parseMail(t, got.Data).Header.Get("To"), rcpt[strings.LastIndexByte(rcpt, '@'):], "the To header for %q", to)
		require.Equal(t, http.StatusOK, e.verify(t, prod, rcpt, code).Status, "the code verifies the address it was mailed to")
	}
	// A domain that maps to no valid domain is refused before anything is sent.
	before := e.SMTP.MessageCount()
	require.Equal(t, "invalid_email", e.send(t, prod, emailData("a@x.\u200b")).ErrorCode(t))
	require.Equal(t, before, e.SMTP.MessageCount())
}

// A send never aims the SMTP relay at a host inside its own network: a domain literal (which a
// relay delivers to that IP address), a single-label name (resolved on the relay's network), an
// IP address written as a name or a .localhost name is invalid_email, in a test-mode app too,
// and the relay is not even contacted. Before, a@[10.0.0.5] and a@localhost were mailed.
func TestSendsOnlyToPublicDomainNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	prod := e.createApp(t, false, store.AppOptions{})
	test := e.createApp(t, true, store.AppOptions{})
	before := e.SMTP.Connections()
	for _, to := range []string{
		"a@[10.0.0.5]", "a@[127.0.0.1]", "a@localhost", "a@LocalHost", "a@intranet",
		"a@127.0.0.1", "a@0x7f.1", "a@app.localhost", "a@ｌｏｃａｌｈｏｓｔ", "a@127。0。0。1", "a@intranet\u200b",
	} {
		for _, a := range []apps.Created{prod, test} {
			r := e.send(t, a, emailData(to))
			require.Equal(t, "invalid_email", r.ErrorCode(t), "%q: %s", to, r.Body)
			require.Contains(t, string(r.Body), "public domain name", "%q", to)
		}
	}
	// net/mail does not read an IPv6 literal as an address at all.
	require.Equal(t, "invalid_email", e.send(t, prod, emailData("a@[IPv6:::1]")).ErrorCode(t))
	require.Equal(t, before, e.SMTP.Connections(), "the relay was not contacted")
	e.sendOK(t, prod, "a@intranet.example.com")
}

// A code mailed to a mailbox whose name only looks like another's does not verify the other:
// the canonical form folds case, but never turns a non-ASCII letter into an ASCII one. Before,
// strings.ToLower made the Kelvin sign a "k" and the dotted capital I an "i", so a code sent to
// "\u212Aate@x.io" (a mailbox of its own wherever Unicode local parts are allowed) verified
// kate@x.io, and one sent to "vİctor@x.io" verified victor@x.io.
func TestLookalikeLocalPartsDoNotShareCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSMTPUTF8)
	prod := e.createApp(t, false, store.AppOptions{})
	for lookalike, victim := range map[string]string{"\u212Aate@x.io": "kate@x.io", "v\u0130ctor@x.io": "victor@x.io"} {
		code := e.sendOK(t, prod, lookalike)
		require.Equal(t, "verification_code_not_found", e.verify(t, prod, victim, code).ErrorCode(t), lookalike)
		require.Equal(t, http.StatusOK, e.verify(t, prod, lookalike, code).Status, lookalike)
	}
	// Case variants of one script still share: Ü and ü, Σ and σ.
	code := e.sendOK(t, prod, "\u00dcber\u03a3@x.io")
	require.Equal(t, http.StatusOK, e.verify(t, prod, "\u00fcber\u03c3@x.io", code).Status)
}

// withSMTPUTF8 makes the env's SMTP server offer SMTPUTF8, which non-ASCII addresses need.
func withSMTPUTF8(s *setup) { s.smtp.SMTPUTF8 = true }

// A non-ASCII local part goes only to an SMTP server that offers SMTPUTF8 (RFC 6531). Before,
// "Zoë@x.io" went as raw UTF-8 in RCPT TO and the To header to a server that did not offer it,
// and each such server does its own thing with those bytes (refuses, re-encodes them or
// delivers to another mailbox) while the app was told the mail was sent. Now nothing is sent,
// the answer is send_email_error at stage "message" and the code is withdrawn.
func TestNonASCIIAddressNeedsSMTPUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	prod := e.createApp(t, false, store.AppOptions{})
	r := e.send(t, prod, emailData("Zoë@x.io"))
	require.Equal(t, "send_email_error", r.ErrorCode(t), "%s", r.Body)
	require.Contains(t, string(r.Body), `stage \"message\"`)
	require.NotContains(t, string(r.Body), "Zoë")
	require.Zero(t, e.SMTP.MessageCount(), "nothing was sent")
	require.Equal(t, "verification_code_not_found", e.verify(t, prod, "Zoë@x.io", "12345678").ErrorCode(t),
		"the code of the unsent mail was withdrawn")
	// An ASCII address still goes through the same server.
	e.sendOK(t, prod, "zoe@x.io")

	// A non-ASCII domain needs nothing: it is mailed in ASCII (punycode), the Reply-To's too.
	data := emailData("zoe@bücher.example")
	data["reply_to_email"] = "Help@Bücher.example"
	require.Equal(t, http.StatusOK, e.send(t, prod, data).Status)
	msgs := e.SMTP.Messages()
	got := msgs[len(msgs)-1]
	require.Equal(t, []string{"zoe@xn--bcher-kva.example"}, got.To)
	require.Equal(t, "<Help@xn--bcher-kva.example>", parseMail(t, got.Data).Header.Get("Reply-To"))
}

// A field given twice, in any case, is refused: encoding/json kept the last value silently, so
// {"to_email": "me@x.io", "TO_EMAIL": "victim@x.io"} mailed the victim whatever a check of the
// first value had seen. Unknown keys, even repeated, are still ignored.
func TestRepeatedFieldsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	test := e.createApp(t, true, store.AppOptions{})
	head := fmt.Sprintf(`{"app_id": %q, "auth_token": %q, `, apps.FormatID(test.App.ID), test.AuthToken)
	mail := `"subject": "S", "text": "SERVICE_VERIFICATION_CODE"`
	for path, c := range map[string]struct{ body, key string }{
		"/verification/email/code":   {`"email": "me@x.io", "Email": "victim@x.io"}`, "Email"},
		"/verification/email/verify": {`"email": "me@x.io", "verification_code": "1", "verification_code": "2"}`, "verification_code"},
		"/verification/email":        {`"email_data": {` + mail + `, "to_email": "me@x.io", "TO_EMAIL": "victim@x.io"}}`, "email_data.TO_EMAIL"},
	} {
		r := apptest.Do(t, e.App, http.MethodPost, path, head+c.body)
		require.Equal(t, "invalid_body", r.ErrorCode(t), "%s: %s", path, r.Body)
		require.Contains(t, string(r.Body), c.key+" is given twice", path)
	}
	require.Empty(t, e.SMTP.Messages(), "nothing was mailed")
	r := apptest.Do(t, e.App, http.MethodPost, "/verification/email",
		head+`"x": 1, "x": 2, "email_data": {`+mail+`, "to_email": "me@x.io", "y": 1, "y": 2}}`)
	require.Equal(t, http.StatusOK, r.Status, "unknown keys are ignored: %s", r.Body)
}
