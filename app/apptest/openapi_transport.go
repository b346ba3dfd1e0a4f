package apptest

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Answers of real servers started with Start are checked against the OpenAPI document too:
// apptest (a package only tests import) wraps http.DefaultTransport when a test binary starts,
// and the wrapper checks every exchange with a host that Start registered. Other hosts (MailDev,
// the browser) pass through untouched. A failed check is returned by the body's Read in place of
// io.EOF (or, for a small answer of known length, read and checked at once, by the request), so
// the test's require.NoError reports it with the route; a streamed body is checked as it
// streams, so a slow reader stays slow.

var (
	checkedMu    sync.Mutex
	checkedHosts = map[string]bool{}
)

func init() {
	http.DefaultTransport = &checkingTransport{next: http.DefaultTransport}
}

// CheckHost makes every request this process sends to host (host:port) go through the OpenAPI
// check. Start calls it for the servers it starts.
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

type checkingTransport struct{ next http.RoundTripper }

func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isChecked(req.URL.Host) {
		return c.next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		clone := req.Clone(req.Context())
		clone.Body = io.NopCloser(bytes.NewReader(body))
		clone.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req = clone
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	x := Exchange{Request: req, RequestBody: body, Status: resp.StatusCode, Header: resp.Header}
	if resp.ContentLength < 0 || resp.ContentLength > 1<<20 {
		resp.Body = &checkedBody{rc: resp.Body, x: x}
		return resp, nil
	}
	// A small answer of known length is read and checked at once, so the check runs even when
	// the test never reads the body; a failure is the request's error.
	x.Body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	d, err := LoadAPIDoc()
	if err == nil {
		err = d.Check(x)
	}
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(x.Body))
	return resp, nil
}

// checkedBody keeps what it reads and checks the exchange at the end of the body.
type checkedBody struct {
	rc   io.ReadCloser
	x    Exchange
	buf  bytes.Buffer
	done bool
	err  error
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
		b.x.Body = b.buf.Bytes()
		d, lerr := LoadAPIDoc()
		if lerr == nil {
			lerr = d.Check(b.x)
		}
		if lerr != nil {
			b.err = lerr
			return n, lerr
		}
	}
	return n, err
}

func (b *checkedBody) Close() error { return b.rc.Close() }
