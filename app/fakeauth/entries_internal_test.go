package fakeauth

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written answer of public_identities is byte for byte what encoding/json writes.
func FuzzAppendEntries(f *testing.F) {
	f.Add("alice@example.com", "eyJhIjoiYiJ9", "bob@example.com")
	f.Add(`"quoted"@example.com`, "x", `a\b<c>&d@example.com`)
	f.Add("émile@exämple.com", "\u2028", "\x00\x7f\xff@x.io")
	f.Fuzz(func(t *testing.T, e1, pub, e2 string) {
		emails, pubs := []string{e1, e2}, []string{pub, pub + "2"}
		want, err := json.Marshal([]PublicIdentityEntry{{e1, pubs[0]}, {e2, pubs[1]}})
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEntries(nil, emails, pubs)))
	})
}

func TestAppendEntriesEmptyList(t *testing.T) {
	require.Equal(t, "[]", string(appendEntries(nil, nil, nil)))
}

// splitEmails gives the items strings.Split gives, empty ones included.
func FuzzSplitEmails(f *testing.F) {
	for _, s := range []string{"a@x.io", "a@x.io,,b@x.io", ",", "a,", ",a", ""} {
		f.Add(s, "b@y.io,")
	}
	f.Fuzz(func(t *testing.T, p1, p2 string) {
		var want []string
		n := 0
		for _, p := range []string{p1, p2} {
			if p != "" {
				want = append(want, strings.Split(p, ",")...)
				n += strings.Count(p, ",") + 1
			}
		}
		got := splitEmails([]string{p1, p2}, n)
		require.Len(t, got, len(want))
		if len(want) > 0 {
			require.Equal(t, want, got)
		}
	})
}
