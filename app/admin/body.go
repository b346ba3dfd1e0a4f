package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/jsonkeys"
)

// decodeStrict parses body as exactly one JSON object into v. The admin API is idvault's own, so
// it is strict where a lenient parser would act on a mistake: an unknown field ("test_mode" for
// "test") is refused, not ignored (an app meant for tests would otherwise be created as a
// production app), and so is anything after the object. The error names what was wrong, for the
// invalid_body message; an unknown field's name is quoted when it looks like a field name
// (jsonkeys.Name: a key may be a secret pasted in the wrong place). A field given twice is
// refused too (jsonkeys.Repeated, compared as encoding/json matches fields).
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		// Said as such: an HTTP/1.0 client that sends no Content-Length has its body dropped.
		return errors.New("the body is empty (with HTTP/1.0, send a Content-Length)")
	}
	if name, ok := jsonkeys.Repeated(body, true); ok { // the last value would win silently
		return fmt.Errorf("field %s given twice", jsonkeys.Name(name))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := jsonkeys.UnknownField(err); ok {
			return fmt.Errorf("unknown field %s", name)
		}
		return errors.New("not a JSON object of the expected fields and types")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON object")
	}
	return nil
}

// noBody refuses a body on a route that reads none (rotate-token, DELETE): an ignored body
// ({"confirm": false} on a DELETE) would be acted against, not on. Blank space passes.
func noBody(body []byte) error {
	if len(bytes.TrimSpace(body)) > 0 {
		return apierr.InvalidBody.Msg("this route takes no body: nothing was done")
	}
	return nil
}
