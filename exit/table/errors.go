package table

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// ConfigError is a problem found before anything is written: a connection that fails, a
// column that is not there or has the wrong type, a destination that does not fit or holds
// another command's progress. Retrying cannot help; the command exits 2.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, a ...any) error { return &ConfigError{Msg: fmt.Sprintf(format, a...)} }

// ErrLocked reports a destination another run is writing (its session holds the
// destination's advisory lock).
var ErrLocked = errors.New("another decrypt-table run is writing this destination")

// Failure codes of this package (the others are the Decrypter's).
const (
	CodeInvalidEncoding = "invalid_encoding" // a text ciphertext that is not in the run's encoding
	CodeNotText         = "not_text"         // clear bytes that are not UTF-8 (or hold NUL) for a text column
	CodeSealFailed      = "seal_failed"      // Seal refused the clear value
)

// pgMessage describes a PostgreSQL error without its DETAIL, HINT, WHERE or any other part
// that may quote a row's values: the message (which names the constraint or the table, never a
// value, for the errors a COPY of well-formed binary rows can meet), the SQLSTATE, and the
// constraint. Any other error is described by its type only when it may come from the server.
func pgMessage(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		s := fmt.Sprintf("%s (SQLSTATE %s)", pg.Message, pg.Code)
		if pg.ConstraintName != "" {
			s += ", constraint " + pg.ConstraintName
		}
		return s
	}
	return err.Error()
}
