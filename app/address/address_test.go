package address

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
		// Lower case, but never a non-ASCII letter into an ASCII one: "İbm" is not "ibm" (IDNA
		// makes it i̇bm, xn--ibm-8dc), nor the Kelvin sign a "k".
		"victim@\u0130BM.example": "victim@\u0130bm.example",
		"a@\u212AEY.com":          "a@\u212Aey.com",
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
	for _, s := range []string{"alice@example.com", " A@B.C ", "a <b@c.d>", `"q"@x.io`, "é@ü.de"} {
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
