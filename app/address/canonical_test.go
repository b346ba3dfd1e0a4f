package address

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Victim@Example.com":      "victim@example.com",
		"VICTIM@EXAMPLE.COM":      "victim@example.com",
		"a@bücher.example":        "a@xn--bcher-kva.example",
		"a@BÜCHER.example":        "a@xn--bcher-kva.example",
		"a@xn--bcher-kva.example": "a@xn--bcher-kva.example",
		"x@münchen.de":            "x@xn--mnchen-3ya.de",
		"u@例え.テスト":                "u@xn--r8jz45g.xn--zckzah", // RFC 3492 / IANA test names
		"Ünïcode@example.org":     "ünïcode@example.org",
	} {
		require.Equal(t, want, Canonical(in), in)
	}
}
