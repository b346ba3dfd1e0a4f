package exitclient_test

import (
	"strings"
	"testing"

	"idvault/app/exitclient"
)

// ReadIdentities never panics, and whatever it accepts is non-empty identities with their
// line numbers in order.
func FuzzReadIdentities(f *testing.F) {
	for _, seed := range []string{
		"{\"email\":\"a@x.io\",\"identity\":\"ID-A\"}\n\"ID-B\"\n",
		`["ID-A", {"identity": "ID-B"}, {"private_permanent_identity": "P", "private_provisional_identity": "Q"}]`,
		"\n\n  \n", `{"identity": 3}`, `[`, `"`, "\"a\"\r\n\"b\"", `{"private_identity": ""}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ids, err := exitclient.ReadIdentities(strings.NewReader(in))
		if err != nil {
			return
		}
		last := 0
		for _, id := range ids {
			if strings.TrimSpace(id.Value) == "" {
				t.Fatalf("empty identity accepted from %q", in)
			}
			if id.Line < last || id.Line < 1 {
				t.Fatalf("line numbers out of order: %v", ids)
			}
			last = id.Line
		}
	})
}
