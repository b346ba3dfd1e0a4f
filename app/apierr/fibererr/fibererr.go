// Package fibererr is the error catalogue's side in fiber's applications (the main server): the
// error body style a route chooses, and the errors fiber and fasthttp raise around handlers
// mapped to the catalogue. Package apierr itself imports no HTTP framework.
package fibererr

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
)

// FromFiber maps any error an HTTP handler chain returns to the catalogue: an *Error as it is;
// the errors fiber and fasthttp raise around handlers to not_found (404), method_not_allowed
// (405), tooLarge (413: each interface names its own body-size code),
// request_header_too_large (431) and, for another 4xx, invalid_body with fiber's message;
// anything else to internal_error (whose text only reaches the log).
func FromFiber(err error, tooLarge apierr.Code) *apierr.Error {
	if e := apierr.As(err); e != nil {
		return e
	}
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return apierr.Internal(err)
	}
	switch {
	case fe.Code == fiber.StatusNotFound:
		return apierr.NotFound.New()
	case fe.Code == fiber.StatusMethodNotAllowed:
		return apierr.MethodNotAllowed.New()
	case fe.Code == fiber.StatusRequestEntityTooLarge:
		return tooLarge.New()
	case fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
		return apierr.HeaderTooLarge.New()
	case fe.Code < 500:
		return apierr.InvalidBody.Msg("%s", fe.Message)
	}
	return apierr.Internal(err)
}

const styleKey = "idvault.errstyle"

// SetStyle chooses the error body style for the rest of this request.
func SetStyle(c *fiber.Ctx, s apierr.Style) { c.Locals(styleKey, s) }

// StyleOf returns the style chosen for this request (StyleTanker by default).
func StyleOf(c *fiber.Ctx) apierr.Style {
	if s, ok := c.Locals(styleKey).(apierr.Style); ok {
		return s
	}
	return apierr.StyleTanker
}

// WithStyle is a middleware that sets the style for a group of routes.
func WithStyle(s apierr.Style) fiber.Handler {
	return func(c *fiber.Ctx) error {
		SetStyle(c, s)
		return c.Next()
	}
}
