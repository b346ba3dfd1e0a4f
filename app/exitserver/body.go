package exitserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/jsonkeys"
)

// bodyBound is the body size a handler reserves memory for: the announced Content-Length, or
// limit when there is none (a chunked body) or it is over limit (the read stops past limit).
func bodyBound(x *exchange, limit int64) int64 {
	n := x.r.ContentLength
	if n < 0 || n > limit {
		return limit
	}
	return n
}

// readJSON reads a body of up to limit bytes that holds one JSON object, without unknown
// fields, into v; shape is the body wanted, for the error message.
func readJSON(x *exchange, limit int64, v any, shape string) error {
	raw, err := readLimited(x, limit)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apierr.InvalidBody.Msg("want %s: %s", shape, jsonProblem(err))
	}
	if dec.More() {
		return apierr.InvalidBody.Msg("want one JSON object, found more after it")
	}
	if key, ok := jsonkeys.Repeated(raw, true); ok { // compared as encoding/json matches fields
		return apierr.InvalidBody.Msg("want %s: the key %s is given twice (only the last would count)", shape, jsonkeys.Name(key))
	}
	return nil
}

// readLimited reads all of r, or answers payload_too_large past limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, apierr.InvalidBody.Msg("reading the body: %v", err)
	}
	if int64(len(raw)) > limit {
		return nil, apierr.PayloadTooLarge.Msg("the body is over %d bytes", limit)
	}
	return raw, nil
}

// jsonProblem describes a JSON decoding error without quoting the input (which may hold
// identities).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te) && te.Field == "":
		return fmt.Sprintf("the body must be a JSON object, not a JSON %s", te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("%s holds a JSON %s where %s belongs", te.Field, te.Value, jsonKind(te.Type))
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	if key, ok := jsonkeys.UnknownField(err); ok {
		return "unknown key " + key
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// jsonKind names a Go type as the JSON value it decodes from, so that an error message speaks
// of the request, not of the server's types ("an array of strings", not "[]string").
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	default:
		return "a number"
	}
}
