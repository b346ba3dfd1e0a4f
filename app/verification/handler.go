// Package verification is the email verification API: codes sent over SMTP inside the
// caller's own mail, test-mode codes, code checks, and throttling.
package verification

import (
	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
)

// Handler serves /verification/email... .
type Handler struct{}

var errTODO = apierr.InternalError.Msg("not implemented yet")

// Send: POST /verification/email.
func (h *Handler) Send(c *fiber.Ctx) error { return errTODO }

// Code: POST /verification/email/code.
func (h *Handler) Code(c *fiber.Ctx) error { return errTODO }

// Verify: POST /verification/email/verify.
func (h *Handler) Verify(c *fiber.Ctx) error { return errTODO }
