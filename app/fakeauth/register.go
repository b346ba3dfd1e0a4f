package fakeauth

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/jsonkeys"
)

// registerBody is the optional body of PUT private_identity.
type registerBody struct {
	Registered *bool `json:"registered"`
}

// Register: PUT /apps/:app_id/private_identity?email=E, optional body {"registered": true}.
//
// It marks the email's permanent identity as registered, so that public_identities answers with
// it from then on even if a provisional identity exists. The body may be empty or a JSON object;
// "registered", when present, must be true (an identity cannot be unregistered) and given once
// (in any case: encoding/json would keep the last); other keys are ignored. An email without a permanent identity (never seen, or seen only by
// public_identities) is user_not_found. Answer: 200 {}.
func (h *Handler) Register(c *fiber.Ctx) error {
	app, err := h.app(c)
	if err != nil {
		return err
	}
	email, err := singleEmail(c)
	if err != nil {
		return err
	}
	if body := bytes.TrimSpace(c.Body()); len(body) > 0 {
		var b registerBody
		if body[0] != '{' || json.Unmarshal(body, &b) != nil {
			return apierr.InvalidBody.Msg(`the body must be empty or the JSON object {"registered": true}`)
		}
		if _, twice := jsonkeys.RepeatedOf(body, true, "registered"); twice {
			// encoding/json keeps the last: {"registered": false, "Registered": true} registered
			return apierr.InvalidBody.Msg(`"registered" is given twice`)
		}
		if b.Registered != nil && !*b.Registered {
			return apierr.InvalidBody.Msg(`"registered" can only be true: an identity cannot be unregistered`)
		}
	}
	if _, err := h.dir.Register(app, email); err != nil {
		return dirError("register", err)
	}
	return c.JSON(fiber.Map{})
}
