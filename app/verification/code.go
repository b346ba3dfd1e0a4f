package verification

import (
	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
)

// codeRequest is the body of POST /verification/email/code.
type codeRequest struct {
	credentials
	Email *string `json:"email"`
}

// Code: POST /verification/email/code, test-mode apps only. It answers
// {"verification_code": "<8 digits>"}: the newest unexpired code of the address, or a new code
// issued without mail when there is none.
func (h *Handler) Code(c *fiber.Ctx) error {
	var req codeRequest
	app, err := h.resolve(c, &req, &req.credentials, nil)
	if err != nil {
		return err
	}
	if req.Email == nil {
		return apierr.InvalidBody.Msg("email is required")
	}
	email, nerr := address.Normalize(*req.Email)
	if nerr != nil {
		return apierr.InvalidEmail.Msg("email is not a valid email address")
	}
	if !app.Test {
		return apierr.AppIsNotTest.New()
	}
	code, err := generateCode()
	if err != nil {
		return apierr.Internal(err)
	}
	got, _, err := h.store.TestCode(h.issue(app, address.Canonical(email), code))
	if err != nil {
		return apierr.Internal(err)
	}
	return c.JSON(fiber.Map{"verification_code": got.Plain})
}
