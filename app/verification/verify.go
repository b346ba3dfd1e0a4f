package verification

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// verifyRequest is the body of POST /verification/email/verify.
type verifyRequest struct {
	credentials
	Email            *string `json:"email"`
	VerificationCode *string `json:"verification_code"`
}

// Verify: POST /verification/email/verify. It checks a code against the address's unexpired
// codes and uses it up; 200 {} on success.
func (h *Handler) Verify(c *fiber.Ctx) error {
	var req verifyRequest
	app, err := h.resolve(c, &req, &req.credentials, nil)
	if err != nil {
		return err
	}
	switch {
	case req.Email == nil:
		return apierr.InvalidBody.Msg("email is required")
	case req.VerificationCode == nil:
		return apierr.InvalidBody.Msg("verification_code is required")
	}
	email, nerr := address.Normalize(*req.Email)
	if nerr != nil {
		return apierr.InvalidEmail.Msg("email is not a valid email address")
	}
	code := strings.TrimSpace(*req.VerificationCode)
	email = address.Canonical(email) // codes and lock counters are kept under the canonical form
	err = h.store.UseCode(app.ID, email, codeMAC(h.key, app.ID, email, code), h.attempts)
	var te *store.ThrottleError
	switch {
	case err == nil:
		h.metrics.verifies.WithLabelValues(resultOK).Inc()
		return c.JSON(fiber.Map{})
	case errors.As(err, &te):
		h.metrics.verifies.WithLabelValues(resultLocked).Inc()
		e := apierr.TooManyAttempts.New()
		e.RetryAfter = te.RetryAfter
		return e
	case errors.Is(err, store.ErrCodeMismatch):
		h.metrics.verifies.WithLabelValues(resultWrong).Inc()
		return apierr.InvalidVerificationCode.New()
	case errors.Is(err, store.ErrCodeExpired):
		h.metrics.verifies.WithLabelValues(resultExpired).Inc()
		return apierr.VerificationCodeExpired.New()
	case errors.Is(err, store.ErrCodeUsed):
		h.metrics.verifies.WithLabelValues(resultUsed).Inc()
		return apierr.VerificationCodeUsed.New()
	case errors.Is(err, store.ErrNotFound):
		h.metrics.verifies.WithLabelValues(resultNotFound).Inc()
		return apierr.VerificationCodeNotFound.New()
	}
	return apierr.Internal(err)
}
