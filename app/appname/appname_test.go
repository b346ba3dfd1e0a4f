package appname_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/appname"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Shop":                    true,
		"My shop (staging) — été": true,
		strings.Repeat("é", 100):  true, // 100 characters, 200 bytes
		strings.Repeat("é", 101):  false,
		"":                        false,
		"Sh\u200bop":              false, // zero-width space
		"x\u009b31mred":           false, // C1 CSI
		"next\u0085line":          false,
		"\u202egnp.exe":           false, // right-to-left override
		"a\u2028b":                false, // line separator
		"a\u00adb":                false, // soft hyphen (format)
		"a\u00a0b":                false, // another space than the ASCII one
		"tab\there":               false,
		"nul\x00":                 false,
		"bad\xffutf8":             false,
	} {
		require.Equal(t, want, appname.Valid(name), "%q", name)
	}
}

// The message states the limit the code applies.
func TestRuleNamesMaxChars(t *testing.T) {
	t.Parallel()
	require.Contains(t, appname.Rule, " "+strconv.Itoa(appname.MaxChars)+" ")
}
