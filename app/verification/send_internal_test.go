package verification

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/address"
)

// Validating a send canonicalises its recipient once, for both of its uses: the draft carries
// the canonical address its code and send limits are keyed under (Send takes it from there),
// and the mail goes to the local part as written at that same domain.
func TestValidateCanonicalisesTheRecipientOnce(t *testing.T) {
	t.Parallel()
	h := &Handler{tmpl: newTemplate(nil)}
	subject, text := "Your code", "Code: "+Placeholder
	for in, want := range map[string]struct{ key, to string }{
		"Victim@Bücher.Example": {"victim@xn--bcher-kva.example", "Victim@xn--bcher-kva.example"},
		"Victim@faß.de":         {"victim@xn--fa-hia.de", "Victim@xn--fa-hia.de"},
		"a@ｘ.io":                {"a@x.io", "a@x.io"},
		"Plain@Example.com":     {"plain@example.com", "Plain@example.com"},
	} {
		d, verr := h.validate(&emailData{Subject: &subject, ToEmail: &in, Text: &text}, false)
		require.Nil(t, verr, in)
		require.Equal(t, want.key, d.key, in)
		require.Equal(t, address.Canonical(d.to), d.key, in)
		require.Equal(t, want.to, d.msg.To, in)
	}
}
