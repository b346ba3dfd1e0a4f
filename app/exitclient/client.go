// Package exitclient is the bulk client of the exit server (`idvault exit import` and
// `idvault exit decrypt`): identities imported in batches, and a tree of ciphertexts mirrored
// into clear files, with retries on server errors and dropped connections, resumable output and
// a report of every failure by file and error code.
package exitclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client talks to one exit server.
type Client struct {
	// URL is the server's base URL (http://127.0.0.1:8000).
	URL string
	// Token is sent as a bearer token when not empty.
	Token string
	// HTTP is the client used (default: keep-alive, no overall timeout since streams are long).
	HTTP *http.Client
	// Attempts is how many times a request is tried on 5xx, 429 and connection errors (default 8).
	Attempts int
	// Backoff is the first wait between attempts, doubled each time up to 10 s (default 250 ms).
	Backoff time.Duration
}

// New returns a client for the server at url.
func New(url, token string) *Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		// Bulk transfer: large buffers mean few syscalls per MiB.
		ReadBufferSize:  256 << 10,
		WriteBufferSize: 256 << 10,
	}
	return &Client{URL: strings.TrimRight(url, "/"), Token: token, HTTP: &http.Client{Transport: tr}}
}

func (c *Client) attempts() int {
	if c.Attempts <= 0 {
		return 8
	}
	return c.Attempts
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.Backoff
	if d <= 0 {
		d = 250 * time.Millisecond
	}
	for range attempt {
		d *= 2
		if d >= 10*time.Second {
			d = 10 * time.Second
			break
		}
	}
	return d/2 + rand.N(d/2+1) // jitter so that parallel workers do not retry in step
}

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

// errTransport marks a failure to talk to the server at all (refused, reset, cut short).
type errTransport struct{ err error }

func (e *errTransport) Error() string { return "cannot reach the exit server: " + e.err.Error() }
func (e *errTransport) Unwrap() error { return e.err }

// do sends the request made by mk, retrying on 5xx, 429 and connection errors. It returns the
// first answer that is not retryable (2xx or a client error); for a client error the body is
// already read into the *APIError.
func (c *Client) do(ctx context.Context, mk func() (*http.Request, error)) (*http.Response, error) {
	var last error
	for attempt := range c.attempts() {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(c.backoff(attempt - 1)):
			}
		}
		req, err := mk()
		if err != nil {
			return nil, err
		}
		req = req.WithContext(ctx)
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = &errTransport{err}
			continue
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		apiErr := readAPIError(resp)
		resp.Body.Close()
		if !apiErr.retryable() {
			return nil, apiErr
		}
		last = apiErr
	}
	return nil, fmt.Errorf("giving up after %d attempts: %w", c.attempts(), last)
}

// Code is the error code of err for a report: the server's code, "connection_failed" when
// the server could not be reached, "stream_aborted" when a decrypt stream was cut midway.
func Code(err error) string {
	var api *APIError
	var tr *errTransport
	switch {
	case errors.As(err, &api):
		return api.Code
	case errors.Is(err, ErrStreamAborted):
		return "stream_aborted"
	case errors.As(err, &tr):
		return "connection_failed"
	}
	return "client_error"
}
