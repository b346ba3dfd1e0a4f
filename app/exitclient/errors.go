package exitclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// APIError is an error answer of the server.
type APIError struct {
	Status  int          `json:"status"`
	Code    string       `json:"code"`
	Message string       `json:"message"`
	TraceID string       `json:"trace_id"`
	Entries []EntryError `json:"entries,omitempty"`
}

// EntryError is one refused identity of an import batch.
type EntryError struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message)
}

// retryable reports whether an answer is worth another attempt: the server or its database
// was unavailable, or overloaded.
func (e *APIError) retryable() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// unavailable reports whether an answer says the server cannot serve at all for now (its
// database, a gateway in front of it, overload) rather than failing this one request.
func (e *APIError) unavailable() bool {
	switch e.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// readAPIError builds the error of a non-2xx answer (a generic one when the body is not the
// server's JSON, for example from a proxy).
func readAPIError(resp *http.Response) *APIError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		Error APIError `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err == nil && body.Error.Code != "" {
		body.Error.Status = resp.StatusCode
		return &body.Error
	}
	return &APIError{Status: resp.StatusCode, Code: fmt.Sprintf("http_%d", resp.StatusCode),
		Message: strings.TrimSpace(string(raw[:min(len(raw), 200)]))}
}

// ConfigError is a problem with how the client is set up (the URL, the token, the paths it was
// given): retrying cannot help, and a command reports it once and exits 2.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// errTransport marks a failure to talk to the server at all (refused, reset, cut short).
type errTransport struct{ err error }

func (e *errTransport) Error() string { return "cannot reach the exit server: " + e.err.Error() }
func (e *errTransport) Unwrap() error { return e.err }

// ErrStreamAborted reports a decrypt answer cut before its end: the server found a bad chunk
// after it started sending, or the connection broke. Nothing of it is kept.
var ErrStreamAborted = errors.New("the clear stream was cut before its end")

// ErrInputChanged reports a file under the input directory that changed while it was being
// sent or decrypted (or a records file while it was read): nothing of it is kept, and a rerun
// decrypts it as it is then.
var ErrInputChanged = errors.New("the file changed while it was being read: rerun to decrypt it as it is now")

// StopsRun reports whether err ends a whole run rather than failing one item: the retry budget
// tripped (*UnavailableError), the server refused the token (*ConfigError), or an error says
// so itself (a StopsRun method returning true: an outfiles.OutputError for a full disk, a
// read-only file system, the output directory removed: every other file would fail the same
// way, after the server's work).
func StopsRun(err error) bool {
	var stopper interface{ StopsRun() bool }
	return errors.As(err, new(*UnavailableError)) || errors.As(err, new(*ConfigError)) ||
		errors.As(err, &stopper) && stopper.StopsRun()
}

// failureCoder is an error that names its own failure code: an output file's (outfiles), an
// input file's (tree).
type failureCoder interface{ FailureCode() string }

// Code is the error code of err for a report: the server's code, "connection_failed" when
// the server could not be reached, "server_unavailable" when the run's retry budget ran out,
// "stream_aborted" when a decrypt stream was cut midway, "input_changed" when an input file
// changed while it was sent, or the code an error names itself (a FailureCode method:
// outfiles' "unsafe_output" when a clear file would have been written through a symlink or
// over something that is not a regular file, "output_failed" when it could not be written;
// tree's "not_regular_file" for an input that is not a regular file).
func Code(err error) string {
	var (
		api   *APIError
		tr    *errTransport
		unav  *UnavailableError
		cfg   *ConfigError
		coder failureCoder
	)
	switch {
	case errors.As(err, &unav):
		return "server_unavailable"
	case errors.As(err, &cfg):
		return "client_config"
	case errors.As(err, &coder):
		return coder.FailureCode()
	case errors.As(err, &api):
		return api.Code
	case errors.Is(err, ErrStreamAborted):
		return "stream_aborted"
	case errors.Is(err, ErrInputChanged):
		return "input_changed"
	case errors.As(err, &tr):
		return "connection_failed"
	}
	return "client_error"
}
