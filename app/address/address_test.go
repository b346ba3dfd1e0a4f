package address

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/idna"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"alice@example.com":                     "alice@example.com",
		"  Alice@Example.COM \t":                "Alice@example.com",
		"brendan.eich@tanker.io":                "brendan.eich@tanker.io",
		"a+tag@sub.example.org":                 "a+tag@sub.example.org",
		"dev@localhost":                         "dev@localhost",
		"o'neil@example.com":                    "o'neil@example.com",
		"x@" + strings.Repeat("d", 240) + ".io": "x@" + strings.Repeat("d", 240) + ".io",
		// Lower case, but not where IDNA reads the lower case as another domain: "İbm" is
		// i̇bm (xn--ibm-8dc), not ibm; "STRAẞE" is strasse, not straße (xn--strae-oqa). Where
		// IDNA agrees, the letter folds: the Kelvin sign is "k", "Ü" is "ü".
		"victim@\u0130BM.example": "victim@\u0130bm.example",
		"victim@STRA\u1E9EE.de":   "victim@stra\u1E9Ee.de",
		"a@\u212AEY.com":          "a@key.com",
		"a@ÜBER.example":          "a@über.example",
	}
	for in, want := range good {
		got, err := Normalize(in)
		require.NoError(t, err, "input %q", in)
		require.Equal(t, want, got, "input %q", in)
	}
	bad := []string{
		"", "   ", "plainaddress", "@example.com", "alice@", "alice@@example.com",
		"Alice <alice@example.com>", "<alice@example.com>", "alice@example.com, bob@example.com",
		"alice@example.com (comment)", "ali ce@example.com", "alice@exa mple.com",
		"alice\n@example.com", "alice@example.com\x00", "x@" + strings.Repeat("d", 250) + ".io",
	}
	for _, in := range bad {
		_, err := Normalize(in)
		require.ErrorIs(t, err, ErrInvalid, "input %q", in)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"alice@example.com", " A@B.C ", "a <b@c.d>", `"q"@x.io`, "é@ü.de", "v@\u0130BM.example", "v@STRA\u1E9EE.de", "a@\u212AEY.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		// A normalised address is stable, bounded, and normalises to itself.
		require.LessOrEqual(t, len(n), MaxLength)
		again, err := Normalize(n)
		require.NoError(t, err)
		require.Equal(t, n, again)
		// Normalising never moves the address to another domain: IDNA reads the domain as
		// written and the normalised one alike.
		orig := strings.TrimSpace(s)
		if want, err := idna.Lookup.ToASCII(orig[strings.LastIndexByte(orig, '@')+1:]); err == nil {
			got, err := idna.Lookup.ToASCII(n[strings.LastIndexByte(n, '@')+1:])
			require.NoError(t, err, "%q normalised to %q", s, n)
			require.Equal(t, strings.ToLower(want), strings.ToLower(got), "%q normalised to %q", s, n)
		}
	})
}

// The fast path agrees with the full path (net/mail) on every address it accepts.
func FuzzSimpleAgrees(f *testing.F) {
	for _, s := range []string{"alice@example.com", "Alice.B+tag@Mail.Example.COM", "a@b", "a..b@x.io",
		".a@x.io", "a.@x.io", "a@x..io", "a@-x.io", "a_b@x-y.io", "a@x.io.", "@x.io", "a@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := simple(s)
		if !ok {
			return
		}
		full, err := normalizeFull(s)
		if err != nil {
			t.Fatalf("%q: fast path accepts what net/mail refuses: %v", s, err)
		}
		if full != fast {
			t.Fatalf("%q: fast %q, full %q", s, fast, full)
		}
	})
}
