package exitclient_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/idvault/idvault/app/exitclient"
)

// lineError is how every error of a lines file starts: the line it is about.
var lineError = regexp.MustCompile(`^read identities: line [1-9][0-9]*: `)

// ReadIdentities never panics; whatever it accepts is non-empty identities without spaces or
// line breaks, with line numbers in order and within the input; a lines file's error names a
// line; and an error never quotes the input (entries are secrets).
func FuzzReadIdentities(f *testing.F) {
	for _, seed := range []string{
		"{\"email\":\"a@x.io\",\"identity\":\"ID-A\"}\n\"ID-B\"\n",
		`["ID-A", {"identity": "ID-B"}, {"private_permanent_identity": "P", "private_provisional_identity": "Q"}]`,
		"\n\n  \n", `{"identity": 3}`, `[`, `"`, "\"a\"\r\n\"b\"", `{"private_identity": ""}`,
		"eyJ0cnVzdGNoYWluX2lkIjoiQUFBQSJ9\n{\"identity\":\"ID-A\"}\r\neyJ0-_\n",
		"bare\n" + strings.Repeat("x", 100) + "\nbare", strings.Repeat("y", 65) + "\r\n", "a,b\n\x00\n",
	} {
		f.Add(seed)
	}
	const limit = 64 // a small limit, so that over-long lines are common
	f.Fuzz(func(t *testing.T, in string) {
		ids, err := exitclient.ReadIdentitiesLimit(strings.NewReader(in), limit)
		if err != nil {
			first := strings.TrimLeft(in, " \t\r\n")
			if !strings.HasPrefix(first, "[") && !lineError.MatchString(err.Error()) {
				t.Fatalf("the error does not name a line: %v", err)
			}
			for _, word := range strings.Fields(in) {
				if len(word) >= 12 && !strings.Contains(word, "identity") && strings.Contains(err.Error(), word) {
					t.Fatalf("the error quotes the input %q: %v", word, err)
				}
			}
			return
		}
		last, lines := 0, strings.Count(in, "\n")+1
		for _, id := range ids {
			if strings.TrimSpace(id.Value) == "" {
				t.Fatalf("empty identity accepted from %q", in)
			}
			if id.Line < last || id.Line < 1 || (!strings.HasPrefix(strings.TrimLeft(in, " \t\r\n"), "[") && id.Line > lines) {
				t.Fatalf("line numbers out of order: %v", ids)
			}
			if !strings.HasPrefix(strings.TrimLeft(in, " \t\r\n"), "[") && len(id.Value) > limit {
				t.Fatalf("an identity over the line limit was taken: %d bytes", len(id.Value))
			}
			last = id.Line
		}
	})
}
