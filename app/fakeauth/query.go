package fakeauth

import (
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// queryValues returns the values of every query parameter whose name is one of names, in the
// order they appear in the URL, and whether any was present.
//
// Values are decoded as in HTML forms: %XX escapes, and '+' is a space. Go's url.QueryEscape
// sends a space as '+', so keeping '+' literal would silently turn " alice@example.com" into the
// valid, different address "+alice@example.com"; with form decoding a hand-typed
// ?email=me+test@example.com fails loudly instead (invalid_email, with a hint to send %2B).
func queryValues(c *fiber.Ctx, names ...string) (vals []string, found bool, bad bool) {
	raw := string(c.Request().URI().QueryString())
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || !slices.Contains(names, key) {
			continue
		}
		found = true
		if strings.IndexByte(v, '%') < 0 && strings.IndexByte(v, '+') < 0 { // nothing to decode: no copy
			vals = append(vals, v)
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, true, true
		}
		vals = append(vals, val)
	}
	return vals, found, false
}
