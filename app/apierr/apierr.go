// Package apierr is idvault's error catalogue: every error code an HTTP interface can return,
// with its status and default message, in one place (catalog.go). Handlers return *Error; the
// server's error handler renders it in the body style of the interface that produced it.
package apierr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"syscall"
	"time"
)

// Code is one entry of the catalogue.
type Code struct {
	Status  int
	Name    string
	Message string
}

// Error is an error a client sees. Message is safe to show (never a secret); Cause, when set,
// is only logged, with the request ID.
type Error struct {
	Code    Code
	Message string
	Cause   error
	// RetryAfter, when positive, is sent as a Retry-After header (seconds, rounded up).
	RetryAfter time.Duration
	// Fields, when set, are extra members of the error object in the Tanker style (for example
	// "entries": the per-entry reasons of invalid_identity). Never secrets.
	Fields map[string]any
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code.Name + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Code.Name + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// New makes an error with the code's default message.
func (c Code) New() *Error { return &Error{Code: c, Message: c.Message} }

// Msg makes an error with a specific message (formatted).
func (c Code) Msg(format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an error with the default message that logs cause.
func (c Code) Wrap(cause error) *Error { return &Error{Code: c, Message: c.Message, Cause: cause} }

// Internal wraps an unexpected error: the client sees internal_error, the log sees cause. When
// cause is the server's storage refusing writes (a full disk or quota, a read-only file system),
// the message says so, for the operator reading a client's report: "a retry may help" would
// send them looking for a bug while nothing is stored until they act. The store's own errors
// (an app deleted while the request ran, a damaged data file) are answered where the server is
// assembled (app/server), which knows the store.
func Internal(cause error) *Error {
	switch {
	case errors.Is(cause, syscall.ENOSPC), errors.Is(cause, syscall.EDQUOT):
		return InternalError.Wrap(cause).withMessage(MsgStorageFull)
	case errors.Is(cause, syscall.EROFS):
		return InternalError.Wrap(cause).withMessage(MsgStorageReadOnly)
	}
	return InternalError.Wrap(cause)
}

// The messages of internal_error when the server's storage refuses writes (Internal; a damaged
// data file: app/server).
const (
	MsgStorageFull     = "internal error: the server's disk is full, nothing was stored; retry once its operator frees space"
	MsgStorageReadOnly = "internal error: the server's data file is on a read-only file system, nothing was stored"
	MsgStorageDamaged  = "internal error: the server's data file is damaged, nothing was stored; its operator must restore it from a backup"
)

func (e *Error) withMessage(m string) *Error { e.Message = m; return e }

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// RetryAfterSeconds is d as a Retry-After header value: whole seconds, rounded up, at least 1.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(int(math.Ceil(d.Seconds())), 1))
}
