package apptest

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// Answers of real servers are checked against their OpenAPI document too. apptest (a package
// only tests import) wraps http.DefaultTransport when a test binary starts, and the wrapper
// checks every exchange with a host that Start registered against openapi.json; other hosts
// (MailDev, the browser) pass through untouched. ServeChecked gives a client whose transport
// checks every exchange against the document it is given (the exit server's tests use it with
// exit.json). A failed check is returned by the body's Read in place of io.EOF (or, for a small
// answer of known length or a binary answer, by the request itself), so the test's
// require.NoError reports it with the route; a streamed body is checked as it streams, so a slow
// reader stays slow, and a binary answer is checked at its headers and never read by the check.

var (
	checkedMu    sync.Mutex
	checkedHosts = map[string]bool{}
)

func init() {
	http.DefaultTransport = &checkingTransport{next: http.DefaultTransport}
}

// CheckHost makes every request this process sends to host (host:port) through
// http.DefaultTransport go through the check against openapi.json. Start calls it for the
// servers it starts.
func CheckHost(host string) {
	checkedMu.Lock()
	defer checkedMu.Unlock()
	checkedHosts[host] = true
}

func isChecked(host string) bool {
	checkedMu.Lock()
	defer checkedMu.Unlock()
	return checkedHosts[host]
}

// CheckTransport wraps next so that every exchange through it is checked against the document
// load returns (LoadAPIDoc, LoadExitAPIDoc).
func CheckTransport(next http.RoundTripper, load func() (*APIDoc, error)) http.RoundTripper {
	return &checkingTransport{next: next, load: load}
}

// ServeChecked is Serve with a client that checks every exchange against the document load
// returns. Tests use it; benchmarks use Serve, whose client checks nothing, so that the check
// never weighs on a measurement.
func ServeChecked(tb testing.TB, app *fiber.App, load func() (*APIDoc, error)) (string, *http.Client) {
	tb.Helper()
	url, client := Serve(tb, app)
	client.Transport = CheckTransport(client.Transport, load)
	return url, client
}

type checkingTransport struct {
	next http.RoundTripper
	load func() (*APIDoc, error) // nil: openapi.json, for the hosts registered with CheckHost only
}

func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	load := c.load
	if load == nil {
		if !isChecked(req.URL.Host) {
			return c.next.RoundTrip(req)
		}
		load = LoadAPIDoc
	}
	d, err := load()
	if err != nil {
		return nil, err
	}
	var sent sentBodies
	req = sent.track(req)
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	check := func(body []byte) error {
		x := Exchange{Request: req, Status: resp.StatusCode, Header: resp.Header, Body: body}
		x.RequestBody, x.RequestBodyPartial = sent.snapshot(req.ContentLength)
		return d.Check(x)
	}
	return checkAnswer(d, req, resp, check)
}

// track sets s up to see the body of req, and returns the request to send in its place.
// The request body goes to the transport untouched when it is in memory (GetBody gives the
// check its own copy), so that the exchange is the same as without the check; a stream
// passes through a reader that keeps its start for the check.
func (s *sentBodies) track(req *http.Request) *http.Request {
	switch {
	case req.Body == nil || req.Body == http.NoBody:
	case req.GetBody != nil:
		s.get = req.GetBody
	default:
		clone := req.Clone(req.Context())
		clone.Body = s.wrap(req.Body)
		if get := req.GetBody; get != nil {
			clone.GetBody = func() (io.ReadCloser, error) {
				rc, err := get()
				if err != nil {
					return nil, err
				}
				return s.wrap(rc), nil
			}
		}
		req = clone
	}
	return req
}

// checkAnswer has check run on the answer resp to req: at once on its headers for a binary
// answer, at once on the whole body for a small one of known length, or else at the end of
// the body as the test reads it. A failed check at once is the request's error.
func checkAnswer(d *APIDoc, req *http.Request, resp *http.Response, check func(body []byte) error) (*http.Response, error) {
	if !d.bodyMatters(req, resp.StatusCode, resp.Header) {
		// A binary answer: checked at its headers, the body passes through unread.
		if err := check(nil); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	if resp.ContentLength < 0 || resp.ContentLength > 1<<20 {
		resp.Body = &checkedBody{rc: resp.Body, check: check}
		return resp, nil
	}
	// A small answer of known length is read and checked at once, so the check runs even when
	// the test never reads the body; a failure is the request's error.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if err := check(body); err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// checkedBody keeps what it reads and checks the exchange at the end of the body.
type checkedBody struct {
	rc    io.ReadCloser
	check func(body []byte) error
	buf   bytes.Buffer
	done  bool
	err   error
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.done {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.done = true
		if cerr := b.check(b.buf.Bytes()); cerr != nil {
			b.err = cerr
			return n, cerr
		}
	}
	return n, err
}

func (b *checkedBody) Close() error { return b.rc.Close() }

// maxKept is how much of a request body is kept for the check.
const maxKept = 1 << 20

// sentBodies is the request body as the check sees it: a fresh copy from get for a body in
// memory, or else the body of the latest attempt (the transport asks GetBody for a fresh one
// when it retries on another connection).
type sentBodies struct {
	get func() (io.ReadCloser, error)
	mu  sync.Mutex
	cur *sentBody
}

func (s *sentBodies) wrap(rc io.ReadCloser) io.ReadCloser {
	b := &sentBody{rc: rc}
	s.mu.Lock()
	s.cur = b
	s.mu.Unlock()
	return b
}

// snapshot is what was sent so far, and whether it is only part of the body (not read to its
// end, or over maxKept). The transport may still be sending: the answer of a stream comes while
// its body goes.
func (s *sentBodies) snapshot(contentLength int64) ([]byte, bool) {
	if s.get != nil {
		rc, err := s.get()
		if err != nil {
			return nil, true
		}
		defer rc.Close()
		kept, err := io.ReadAll(io.LimitReader(rc, maxKept+1))
		if err != nil || len(kept) > maxKept {
			return nil, true
		}
		return kept, false
	}
	s.mu.Lock()
	b := s.cur
	s.mu.Unlock()
	if b == nil {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	whole := b.eof || contentLength > 0 && b.n == contentLength
	return bytes.Clone(b.kept), !whole || b.n > maxKept
}

// sentBody passes a request body to the transport and keeps its first maxKept bytes.
type sentBody struct {
	rc   io.ReadCloser // read by the transport only
	mu   sync.Mutex
	kept []byte
	n    int64
	eof  bool
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	if room := maxKept - len(b.kept); room > 0 {
		b.kept = append(b.kept, p[:min(n, room)]...)
	}
	b.n += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	b.mu.Unlock()
	return n, err
}

func (b *sentBody) Close() error { return b.rc.Close() }
