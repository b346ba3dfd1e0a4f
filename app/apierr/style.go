package apierr

import "github.com/gofiber/fiber/v2"

// Style is the shape of an error body. Each interface keeps the shape its clients parse.
type Style int

const (
	// StyleTanker: {"error": {"status", "code", "message", "trace_id"}} (fake authentication,
	// verification, admin, unknown routes).
	StyleTanker Style = iota
	// StyleFlat: {"status", "code", "message"} (verification send route, legacy apps).
	StyleFlat
	// StyleSimple: {"error": "<message>", "code": "<code>"} (reference identity server): error
	// stays the string the reference's clients read; code is the catalogue's name, so that a
	// program tells apart answers of one status (the three 403s of an ID token) without
	// reading the text.
	StyleSimple
)

const styleKey = "idvault.errstyle"

// SetStyle chooses the error body style for the rest of this request.
func SetStyle(c *fiber.Ctx, s Style) { c.Locals(styleKey, s) }

// StyleOf returns the style chosen for this request (StyleTanker by default).
func StyleOf(c *fiber.Ctx) Style {
	if s, ok := c.Locals(styleKey).(Style); ok {
		return s
	}
	return StyleTanker
}

// WithStyle is a middleware that sets the style for a group of routes.
func WithStyle(s Style) fiber.Handler {
	return func(c *fiber.Ctx) error {
		SetStyle(c, s)
		return c.Next()
	}
}

// Body renders e in style s with the request ID as trace ID.
func Body(e *Error, s Style, traceID string) any {
	switch s {
	case StyleFlat:
		return fiber.Map{"status": e.Code.Status, "code": e.Code.Name, "message": e.Message}
	case StyleSimple:
		return fiber.Map{"error": e.Message, "code": e.Code.Name}
	default:
		obj := fiber.Map{"status": e.Code.Status, "code": e.Code.Name, "message": e.Message, "trace_id": traceID}
		for k, v := range e.Fields {
			if _, taken := obj[k]; !taken {
				obj[k] = v
			}
		}
		return fiber.Map{"error": obj}
	}
}
