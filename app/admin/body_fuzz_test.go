package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idvault/idvault/app/jsonkeys"
)

// FuzzDecodeStrict: decodeStrict never panics, and what it accepts is one valid JSON object with
// no key given twice (case-insensitively) and no unknown field.
func FuzzDecodeStrict(f *testing.F) {
	for _, seed := range []string{
		`{"name": "x"}`, `{"name": "x", "test": true, "test": false}`, `{"name": "x", "Name": "y"}`,
		`{"name": "x"} {}`, `{"test_mode": true}`, `[]`, `null`, `{"name": {"a": 1, "a": 2}}`, `{"name": "x",}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateRequest
		if decodeStrict(body, &req) != nil {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			if string(body) != "null" && strings.TrimSpace(string(body)) != "null" {
				t.Fatalf("accepted a body that is no JSON object: %q", body)
			}
			return
		}
		seen := map[string]bool{}
		for k := range top {
			if seen[strings.ToLower(k)] {
				t.Fatalf("accepted a key given twice: %q", body)
			}
			seen[strings.ToLower(k)] = true
		}
		if key, twice := jsonkeys.Repeated(body, true); twice {
			t.Fatalf("accepted the key %q given twice: %q", key, body)
		}
	})
}
