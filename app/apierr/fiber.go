package apierr

import (
	"errors"

	"github.com/gofiber/fiber/v2"
)

// FromFiber maps any error an HTTP handler chain returns to the catalogue: an *Error as it is;
// the errors fiber and fasthttp raise around handlers to not_found (404), method_not_allowed
// (405), tooLarge (413: each interface names its own body-size code),
// request_header_too_large (431) and, for another 4xx, invalid_body with fiber's message;
// anything else to internal_error (whose text only reaches the log).
func FromFiber(err error, tooLarge Code) *Error {
	if e := As(err); e != nil {
		return e
	}
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return Internal(err)
	}
	switch {
	case fe.Code == fiber.StatusNotFound:
		return NotFound.New()
	case fe.Code == fiber.StatusMethodNotAllowed:
		return MethodNotAllowed.New()
	case fe.Code == fiber.StatusRequestEntityTooLarge:
		return tooLarge.New()
	case fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
		return HeaderTooLarge.New()
	case fe.Code < 500:
		return InvalidBody.Msg("%s", fe.Message)
	}
	return Internal(err)
}
