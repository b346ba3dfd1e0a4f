package mail_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

// received is a message as parsed back from what the SMTP server got.
type received struct {
	header  netmail.Header
	subject string
	from    *netmail.Address
	to      *netmail.Address
	replyTo *netmail.Address
	// parts maps a media type (text/plain, text/html) to its decoded content.
	parts       map[string]string
	contentType string
}

func parseReceived(t *testing.T, raw []byte) received {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	var r received
	r.header = m.Header
	dec := new(mime.WordDecoder)
	r.subject, err = dec.DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	r.from, err = netmail.ParseAddress(m.Header.Get("From"))
	require.NoError(t, err)
	r.to, err = netmail.ParseAddress(m.Header.Get("To"))
	require.NoError(t, err)
	if v := m.Header.Get("Reply-To"); v != "" {
		r.replyTo, err = netmail.ParseAddress(v)
		require.NoError(t, err)
	}
	mediaType, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	require.NoError(t, err)
	r.contentType = mediaType
	r.parts = map[string]string{}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(m.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			pt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
			require.NoError(t, err)
			body, err := io.ReadAll(p) // quoted-printable is decoded by multipart
			require.NoError(t, err)
			r.parts[pt] = string(body)
		}
		return r
	}
	body := decodeBody(t, m.Header.Get("Content-Transfer-Encoding"), m.Body)
	r.parts[mediaType] = body
	return r
}

func decodeBody(t *testing.T, cte string, body io.Reader) string {
	t.Helper()
	// Wrap as a one-part multipart so the standard library decodes the transfer encoding.
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	raw, err := io.ReadAll(body)
	require.NoError(t, err)
	fmt.Fprintf(&buf, "--%s\r\nContent-Transfer-Encoding: %s\r\n\r\n%s\r\n--%s--\r\n",
		w.Boundary(), cte, raw, w.Boundary())
	p, err := multipart.NewReader(&buf, w.Boundary()).NextPart()
	require.NoError(t, err)
	out, err := io.ReadAll(p)
	require.NoError(t, err)
	return string(out)
}

func TestMessageRendering(t *testing.T) {
	cases := []struct {
		name         string
		msg          mail.Message
		wantType     string
		wantFromName string
		wantParts    map[string]string
	}{
		{
			name: "text and html with UTF-8 names and reply-to",
			msg: mail.Message{
				FromName: "Jürgen von idvault", To: "bob@example.org", ToName: "Bøb Ünïcode",
				ReplyTo: "support@idvault.test", ReplyToName: "Support-Team (Zürich)",
				Subject: "Ihr Bestätigungscode: 123456 ✓", Text: "Code: 123456\nGrüße",
				HTML: "<p>Code: <b>123456</b> – Grüße</p>",
			},
			wantType:     "multipart/alternative",
			wantFromName: "Jürgen von idvault",
			wantParts: map[string]string{
				"text/plain": "Code: 123456\r\nGrüße",
				"text/html":  "<p>Code: <b>123456</b> – Grüße</p>",
			},
		},
		{
			name:         "text only uses config from_name",
			msg:          mail.Message{To: "bob@example.org", Subject: "plain", Text: "just text"},
			wantType:     "text/plain",
			wantFromName: "idvault",
			wantParts:    map[string]string{"text/plain": "just text"},
		},
		{
			name:         "html only",
			msg:          mail.Message{To: "bob@example.org", ToName: "Bob", Subject: "html", HTML: "<i>hi</i>"},
			wantType:     "text/html",
			wantFromName: "idvault",
			wantParts:    map[string]string{"text/html": "<i>hi</i>"},
		},
		{
			name: "display names with specials are quoted",
			msg: mail.Message{FromName: `ACME "Accounts", Inc.`, To: "bob@example.org",
				ToName: `O'Brien, Bob <admin>`, Subject: "x", Text: "y"},
			wantType:     "text/plain",
			wantFromName: `ACME "Accounts", Inc.`,
			wantParts:    map[string]string{"text/plain": "y"},
		},
		{
			// A word cannot be folded: written as it is, this one made a 999-byte line (its
			// folding space and the word), over RFC 5322's 998, which strict MTAs bounce.
			name:         "a subject of one long word",
			msg:          mail.Message{To: "bob@example.org", Subject: strings.Repeat("A", 998), Text: "y"},
			wantType:     "text/plain",
			wantFromName: "idvault",
			wantParts:    map[string]string{"text/plain": "y"},
		},
		{
			name: "a subject with a long link between words",
			msg: mail.Message{To: "bob@example.org", Text: "y",
				Subject: "Your code 12345678 - https://example.org/verify?" + strings.Repeat("tok3n", 40) + " (valid  30 min)"},
			wantType:     "text/plain",
			wantFromName: "idvault",
			wantParts:    map[string]string{"text/plain": "y"},
		},
		{
			name: "a long word with a tab, and a non-ASCII long word",
			msg: mail.Message{To: "bob@example.org", Text: "y",
				Subject: strings.Repeat("a\tb", 30) + " " + strings.Repeat("é", 60)},
			wantType:     "text/plain",
			wantFromName: "idvault",
			wantParts:    map[string]string{"text/plain": "y"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			s, _ := newSender(t, testConfig(srv))
			require.NoError(t, s.Send(context.Background(), tc.msg))
			msgs := srv.Messages()
			require.Len(t, msgs, 1)
			require.Equal(t, "no-reply@idvault.test", msgs[0].From)
			require.Equal(t, []string{tc.msg.To}, msgs[0].To)

			r := parseReceived(t, msgs[0].Data)
			require.Equal(t, tc.msg.Subject, r.subject)
			require.Equal(t, tc.wantType, r.contentType)
			require.Equal(t, "no-reply@idvault.test", r.from.Address)
			require.Equal(t, tc.wantFromName, r.from.Name)
			require.Equal(t, tc.msg.To, r.to.Address)
			require.Equal(t, tc.msg.ToName, r.to.Name)
			if tc.msg.ReplyTo != "" {
				require.NotNil(t, r.replyTo)
				require.Equal(t, tc.msg.ReplyTo, r.replyTo.Address)
				require.Equal(t, tc.msg.ReplyToName, r.replyTo.Name)
			} else {
				require.Nil(t, r.replyTo)
			}
			require.Equal(t, tc.wantParts, trimParts(r.parts))

			id := r.header.Get("Message-Id")
			require.Regexp(t, `^<[0-9a-f]{32}@idvault\.test>$`, id)
			date, err := r.header.Date()
			require.NoError(t, err)
			require.WithinDuration(t, time.Now(), date, time.Minute)
			// Raw header lines stay ASCII: non-ASCII names and subject are RFC 2047 encoded.
			head, _, _ := bytes.Cut(msgs[0].Data, []byte("\r\n\r\n"))
			for _, b := range head {
				require.Less(t, b, byte(0x80), "raw header must be ASCII")
			}
			// No header line is longer than RFC 5322's recommended 78 characters, but for
			// a display name without spaces (which cannot be folded but is at most 256 bytes).
			for _, line := range strings.Split(string(head), "\r\n") {
				require.LessOrEqual(t, len(line), 78, "header line %.40q...", line)
			}
		})
	}
}

// trimParts drops the trailing line break go-mail may add to a part.
func trimParts(parts map[string]string) map[string]string {
	out := make(map[string]string, len(parts))
	for k, v := range parts {
		out[k] = strings.TrimRight(v, "\r\n")
	}
	return out
}

func TestMessageIDsAreUnique(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s, _ := newSender(t, testConfig(srv))
	for range 3 {
		require.NoError(t, s.Send(context.Background(), codeMessage()))
	}
	seen := map[string]bool{}
	for _, m := range srv.Messages() {
		id := parseReceived(t, m.Data).header.Get("Message-Id")
		require.False(t, seen[id], "duplicate Message-ID %s", id)
		seen[id] = true
	}
}

func TestInvalidMessage(t *testing.T) {
	base := codeMessage()
	cases := []struct {
		name   string
		mutate func(*mail.Message)
		want   string
	}{
		{name: "no recipient", mutate: func(m *mail.Message) { m.To = "" }, want: "to is required"},
		{name: "bad recipient", mutate: func(m *mail.Message) { m.To = "alice.example.org" }, want: "to is not a valid"},
		{name: "recipient with display name", mutate: func(m *mail.Message) { m.To = "Alice <alice@example.org>" },
			want: "bare address"},
		{name: "bad reply-to", mutate: func(m *mail.Message) { m.ReplyTo = "nope" }, want: "reply_to"},
		{name: "reply-to name without address", mutate: func(m *mail.Message) { m.ReplyToName = "Support" },
			want: "reply_to_name"},
		{name: "no body", mutate: func(m *mail.Message) { m.Text, m.HTML = "", "" }, want: "body is required"},
		{name: "header injection in subject",
			mutate: func(m *mail.Message) { m.Subject += "\r\nBcc: eve@example.org" }, want: "subject"},
		{name: "header injection in name",
			mutate: func(m *mail.Message) { m.ToName = "A\nBcc: eve@example.org" }, want: "to_name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			s, _ := newSender(t, testConfig(srv))
			m := base
			tc.mutate(&m)
			err := s.Send(context.Background(), m)
			require.Error(t, err)
			require.Equal(t, mail.StageMessage, mail.Stage(err))
			require.False(t, mail.IsTemporary(err))
			require.Contains(t, err.Error(), tc.want)
			requireNoSecrets(t, err.Error())
			require.Zero(t, srv.Connections(), "nothing is sent for an invalid message")
		})
	}
}

func TestMessageNeverPrintsContent(t *testing.T) {
	m := codeMessage()
	for _, s := range []string{m.String(), fmt.Sprintf("%v", m), fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m)} {
		requireNoSecrets(t, s)
		require.Contains(t, s, "example.org")
	}
}
