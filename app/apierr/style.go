package apierr

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

// Body renders e in style s with the request ID as trace ID.
func Body(e *Error, s Style, traceID string) any {
	switch s {
	case StyleFlat:
		return map[string]any{"status": e.Code.Status, "code": e.Code.Name, "message": e.Message}
	case StyleSimple:
		return map[string]any{"error": e.Message, "code": e.Code.Name}
	default:
		obj := map[string]any{"status": e.Code.Status, "code": e.Code.Name, "message": e.Message, "trace_id": traceID}
		for k, v := range e.Fields {
			if _, taken := obj[k]; !taken {
				obj[k] = v
			}
		}
		return map[string]any{"error": obj}
	}
}
