package idserver

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"idvault/app/address"
	"idvault/app/apierr"
)

// email returns the normalised email of the request body {"email": "..."}.
//
// The body is read as JSON; without identity_server.token, Authenticate has already required
// Content-Type: application/json (with a token, any Content-Type is read as JSON). A body that is not a JSON object, and an
// email that is missing, null, not a string, or only white space, is "no email provided"; a
// string that is not one valid address is "invalid email". Other keys are ignored.
func email(c *fiber.Ctx) (string, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(c.Body(), &body); err != nil || body == nil {
		return "", apierr.NoEmailProvided.New()
	}
	var s string
	raw, ok := body["email"]
	if !ok || json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", apierr.NoEmailProvided.New()
	}
	e, err := address.Normalize(s)
	if err != nil {
		return "", apierr.InvalidEmailIS.New()
	}
	return e, nil
}
