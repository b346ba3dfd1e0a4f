package mail

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"github.com/idvault/idvault/mail/mailconfig"
)

// Message is one email to one recipient. Subject, Text and HTML typically carry a
// verification code: this package never logs them nor puts them in errors.
type Message struct {
	// FromName overrides Config.FromName when set.
	FromName string
	// To is the recipient's bare address (user@example.com).
	To string
	// ToName is the recipient's display name (optional).
	ToName string
	// ReplyTo is an optional bare Reply-To address.
	ReplyTo string
	// ReplyToName is the Reply-To display name (optional).
	ReplyToName string
	// Subject is the subject line (UTF-8; encoded as needed).
	Subject string
	// Text is the text/plain body. At least one of Text and HTML is required.
	Text string
	// HTML is the text/html body. With Text, the message is multipart/alternative.
	HTML string
}

// String describes the message without its content or full recipient address.
func (m Message) String() string {
	return fmt.Sprintf("mail.Message{to domain %q}", domainOf(m.To))
}

// GoString keeps %#v from printing the content.
func (m Message) GoString() string { return m.String() }

// LogValue implements slog.LogValuer: only the recipient's domain is logged.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(slog.String("rcpt_domain", domainOf(m.To)))
}

// domainOf returns the part after the last "@", lower-cased, or "" when there is none.
func domainOf(addr string) string {
	i := strings.LastIndexByte(addr, '@')
	if i < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimRight(addr[i+1:], "> "))
}

// validate checks the message. Its errors name the field, never its value.
func (m Message) validate() error {
	var errs []error
	if m.To == "" {
		errs = append(errs, errors.New("to is required"))
	} else if err := mailconfig.CheckBareAddress(m.To); err != nil {
		errs = append(errs, fmt.Errorf("to %w", err))
	}
	if m.ReplyTo != "" {
		if err := mailconfig.CheckBareAddress(m.ReplyTo); err != nil {
			errs = append(errs, fmt.Errorf("reply_to %w", err))
		}
	} else if m.ReplyToName != "" {
		errs = append(errs, errors.New("reply_to_name is set without reply_to"))
	}
	for _, f := range []struct{ name, value string }{
		{"from_name", m.FromName}, {"to_name", m.ToName},
		{"reply_to_name", m.ReplyToName}, {"subject", m.Subject},
	} {
		if strings.ContainsAny(f.value, "\r\n") {
			errs = append(errs, fmt.Errorf("%s must be a single line", f.name))
		}
	}
	if m.Text == "" && m.HTML == "" {
		errs = append(errs, errors.New("text or html body is required"))
	}
	return errors.Join(errs...)
}

// build renders m as a go-mail message sent from cfg.From.
func (m Message) build(cfg Config) (*gomail.Msg, error) {
	if err := m.validate(); err != nil {
		return nil, &SendError{Stage: StageMessage, Err: fmt.Errorf("invalid message: %w", err)}
	}
	fromName := cfg.FromName
	if m.FromName != "" {
		fromName = m.FromName
	}
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	// Addresses are set from net/mail values: go-mail renders them with Address.String,
	// which RFC 2047-encodes non-ASCII display names and quotes specials.
	msg.FromMailAddress(&mail.Address{Name: fromName, Address: cfg.From})
	msg.ToMailAddress(&mail.Address{Name: m.ToName, Address: m.To})
	if m.ReplyTo != "" {
		msg.ReplyToMailAddress(&mail.Address{Name: m.ReplyToName, Address: m.ReplyTo})
	}
	msg.Subject(subjectHeader(m.Subject))
	msg.SetDate()
	id, err := messageID(cfg.From)
	if err != nil {
		return nil, &SendError{Stage: StageMessage, Temporary: true, Err: err}
	}
	msg.SetMessageIDWithValue(id)
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		msg.SetBodyString(gomail.TypeTextHTML, m.HTML)
	default:
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	}
	return msg, nil
}

// maxWord is the longest space-separated word a header keeps as written: go-mail folds a
// header only at spaces, and a folded line is a space and the word, so lines stay within RFC
// 5322's recommended 78 characters.
const maxWord = 77

// subjectHeader returns the subject as go-mail should render it. go-mail RFC 2047-encodes a
// non-ASCII subject in encoded-words short enough to fold, but writes an ASCII one as it is, so
// a word longer than a line (a long link, or 998 letters, which made a 999-byte line, over RFC
// 5322's hard limit of 998, so strict MTAs bounced the mail) stayed one line. Such a subject is
// encoded here in B encoded-words of at most 45 bytes each (72 characters), which mail clients
// join back without the spaces between them; go-mail leaves that ASCII string as it is.
func subjectHeader(s string) string {
	long := false
	for _, w := range strings.Split(s, " ") {
		if len(w) > maxWord {
			long = true
			break
		}
	}
	if !long || !unencoded(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		n := min(len(s), 45)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("=?UTF-8?B?")
		b.WriteString(base64.StdEncoding.EncodeToString([]byte(s[:n])))
		b.WriteString("?=")
		s = s[n:]
	}
	return b.String()
}

// unencoded reports whether s has only printable ASCII, spaces and tabs: the strings go-mail
// (mime.WordEncoder) writes into a header without encoding them.
func unencoded(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < ' ' || s[i] > '~') && s[i] != '\t' {
			return false
		}
	}
	return true
}

// errNoSMTPUTF8 is the cause of a send refused before MAIL FROM: the message needs SMTPUTF8
// (needsSMTPUTF8) and the server does not offer it.
var errNoSMTPUTF8 = errors.New("an address (to, reply_to or mail.from) is not ASCII and the SMTP server does not offer SMTPUTF8 (RFC 6531)")

// needsSMTPUTF8 reports whether an address of m, or cfg.From, has a non-ASCII character, so
// that the message may only go to a server offering SMTPUTF8: the envelope (MAIL FROM, RCPT
// TO) and the address headers carry them as UTF-8 (RFC 6531, RFC 6532). Display names and the
// subject are RFC 2047-encoded and need nothing.
func (m Message) needsSMTPUTF8(cfg Config) bool {
	for _, a := range []string{m.To, m.ReplyTo, cfg.From} {
		for i := 0; i < len(a); i++ {
			if a[i] >= 0x80 {
				return true
			}
		}
	}
	return false
}

// messageID returns a random Message-ID value (without angle brackets) in the sender's
// domain.
func messageID(from string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating message id: %w", err)
	}
	domain := domainOf(from)
	if domain == "" {
		domain = "idvault.invalid"
	}
	return hex.EncodeToString(b[:]) + "@" + domain, nil
}
