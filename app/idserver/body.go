package idserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/jsonkeys"
)

// email returns the normalised email of the request body {"email": "..."}.
//
// The body is read as JSON; without identity_server.token, Authenticate has already required
// Content-Type: application/json (with a token, any Content-Type is read as JSON). A body that is not a JSON object, and an
// email that is missing, null, not a string, or only white space, is "no email provided"; a
// string that is not one valid address is "invalid email", and so is a body that gives the key
// "email" twice (which value counts would depend on the parser). Other keys are ignored, even repeated.
func email(c *fiber.Ctx) (string, error) {
	body := c.Request().Body()
	if len(c.Request().Header.Peek(fiber.HeaderContentEncoding)) > 0 {
		body = c.Body() // decoded; without an encoding, the raw body is the same, without a copy
	}
	s, ok := plainEmailBody(body)
	if !ok {
		var err error
		if s, err = emailField(body); err != nil {
			return "", err
		}
	}
	e, err := address.Normalize(s)
	if err != nil {
		return "", apierr.InvalidEmailIS.New()
	}
	return e, nil
}

// plainEmailBody reads the body every client sends, {"email":"..."} with a value free of
// escapes and control characters (white space around the tokens allowed), without encoding/json,
// which cost more than the rest of a known-email request. Any other body returns false and
// takes the general path (emailField), so the answer is the same either way.
func plainEmailBody(body []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
	if !ok {
		return "", false
	}
	if rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"email"`)); !ok {
		return "", false
	}
	if rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(":")); !ok {
		return "", false
	}
	if rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"`)); !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	value := rest[:end]
	for _, b := range value {
		if b < 0x20 || b == '\\' || b >= 0x80 {
			return "", false // escapes, controls and non-ASCII (UTF-8 checks) take the general path
		}
	}
	if tail := bytes.Trim(rest[end+1:], " \t\r\n"); string(tail) != "}" {
		return "", false
	}
	if strings.TrimSpace(string(value)) == "" {
		return "", false // "no email provided", from the general path
	}
	return string(value), true
}

// emailField is the general reading of the body: any JSON object, key "email".
func emailField(raw []byte) (string, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return "", apierr.NoEmailProvided.New()
	}
	if _, twice := jsonkeys.RepeatedOf(raw, false, "email"); twice {
		// encoding/json keeps the last value; a proxy or the app's own check may have read the first
		return "", apierr.InvalidEmailIS.Msg("invalid email: the key \"email\" is given twice")
	}
	var s string
	raw, ok := body["email"]
	if !ok || json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", apierr.NoEmailProvided.New()
	}
	return s, nil
}
