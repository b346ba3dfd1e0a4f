// Package exitclient is the transport to the exit server: every request of the exit commands
// goes through a Client (Do), which retries under a run-wide RetryBudget, abandons an attempt
// that moves no byte (the watchdog), and names every failure by a code for the reports (Code).
// On it sit the server's calls: Probe, Import (identities in batches, as ReadIdentities reads
// them from a file: identities.go), DecryptBatch, DecryptOne and AuditIDs. The runs built on it
// live in the packages below: tree (a directory of ciphertext files), records (CSV and
// JSON-lines fields), audit (which keys are reachable), and outfiles writes their clear files.
//
// It fails well: Probe checks the server once before any work (a bad URL or a refused token is
// a *ConfigError, reported once); retries are shared by the whole run through a RetryBudget, so
// a dead server stops the run once with an *UnavailableError naming it instead of failing every
// item.
package exitclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idvault/idvault/app/userinfo"
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
	// Budget is the run-wide retry allowance shared by every request of this client (New sets
	// one with DefaultMaxOutage). A request keeps retrying past Attempts while no request has
	// succeeded since it started failing, until the budget trips: a dead server ends the run
	// once, after Budget.MaxOutage, instead of failing every file. Nil: Attempts per request only.
	Budget *RetryBudget
	// Idle abandons an attempt when neither its upload nor its answer moved a byte for this long
	// (a hung server, a silent network; default DefaultIdle, 60 s): a stream that moves is never
	// cut, whatever its size. The abandoned attempt counts against Budget from its start.
	Idle time.Duration
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
	return &Client{URL: strings.TrimRight(url, "/"), Token: token, HTTP: &http.Client{Transport: tr}, Budget: NewRetryBudget(0)}
}

func (c *Client) attempts() int {
	if c.Attempts <= 0 {
		return 8
	}
	return c.Attempts
}

func (c *Client) idle() time.Duration {
	if c.Idle <= 0 {
		return DefaultIdle
	}
	return c.Idle
}

func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, 10*time.Second) // the server said when; the cap keeps a run moving
	}
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

// baseURL checks c.URL and returns it parsed: an http or https URL with a host.
func (c *Client) baseURL() (*url.URL, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("the exit server URL %s is not a URL like http://127.0.0.1:8000", strconv.Quote(redactURL(c.URL)))}
	}
	return u, nil
}

// display is c.URL for messages: quoted when it holds anything unprintable, password redacted.
func (c *Client) display() string {
	s := redactURL(c.URL)
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return userinfo.Redact(raw) // not a URL, but it may hold one's user:password@
}

// probeIdle bounds one attempt of Probe: /readyz answers at once, or the server is hung.
const probeIdle = 10 * time.Second

// Probe checks the server once before any real work: reachable, token accepted, database
// ready (GET /readyz with the token answers 200 {"status": "ready"}). A bad URL, a refused
// token or an answer that is not an exit server's is a *ConfigError; a server that does not
// answer (or whose database stays down) is retried under the client's Budget and ends in an
// *UnavailableError naming the URL; ctx ending returns ctx.Err().
func (c *Client) Probe(ctx context.Context) error {
	p := *c
	p.Idle = min(c.idle(), probeIdle)
	resp, err := p.Do(ctx, func() (*http.Request, error) {
		return http.NewRequest(http.MethodGet, c.URL+"/readyz", nil)
	})
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusMisdirectedRequest {
		return &ConfigError{Msg: fmt.Sprintf("the exit server at %s refused the host name of the URL (421 %s): use an address it allows (exit.allowed_hosts)", c.display(), api.Code)}
	}
	if errors.As(err, &api) && api.Status < 500 && !errors.As(err, new(*UnavailableError)) {
		return &ConfigError{Msg: fmt.Sprintf("%s does not look like an exit server: GET /readyz answered %d %s", c.display(), api.Status, api.Code)}
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body); err != nil || body.Status != "ready" {
		return &ConfigError{Msg: fmt.Sprintf("%s does not look like an exit server: GET /readyz answered %d without {\"status\": \"ready\"}", c.display(), resp.StatusCode)}
	}
	return nil
}

// Do sends the request made by mk (called again for each attempt) with the client's token,
// retrying on 5xx, 429 and connection errors with backoff (honouring Retry-After) under the
// client's Budget (a request failing for want of the server keeps waiting past Attempts while no
// other request succeeds, until the budget trips; one the server answers with another 5xx fails
// after Attempts). It returns the first answer that is not retryable: a 2xx response, or an
// *APIError for a client error (its body already read). A bad URL and an answer 401 or 403
// (the token) are *ConfigError; a tripped budget is *UnavailableError; ctx ending is ctx.Err().
func (c *Client) Do(ctx context.Context, mk func() (*http.Request, error)) (*http.Response, error) {
	if _, err := c.baseURL(); err != nil {
		return nil, err
	}
	var (
		last        error
		unreachable bool // last is a sign of a server that cannot be reached or cannot serve
		retryAfter  time.Duration
		failing     time.Time // when this request first failed
	)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt >= c.attempts() && (!unreachable || c.Budget == nil || c.Budget.succeededSince(failing)) {
				// An error answer about this request, or a server that answers others: this
				// request fails on its own account. Otherwise the budget decides.
				return nil, fmt.Errorf("giving up after %d attempts: %w", attempt, last)
			}
			if err := c.wait(ctx, c.backoff(min(attempt-1, 16), retryAfter), last); err != nil {
				return nil, err
			}
		}
		if c.Budget != nil {
			if err := c.Budget.Err(); err != nil {
				return nil, err
			}
		}
		o := c.attempt(ctx, mk)
		if o.resp != nil || o.err != nil {
			return o.resp, o.err
		}
		last, unreachable, retryAfter = o.last, o.unreachable, o.retryAfter
		if failing.IsZero() {
			failing = time.Now()
		}
		if c.Budget != nil {
			if err := c.Budget.FailureSince(c.display(), last, o.started); err != nil {
				return nil, err
			}
		}
	}
}

// outcome is what one attempt of Do came to: a 2xx answer (resp) or an end of Do (err), or
// else a failure worth another attempt (last).
type outcome struct {
	resp        *http.Response
	err         error
	last        error
	unreachable bool          // last is a sign of a server that cannot be reached or cannot serve
	retryAfter  time.Duration // the answer's Retry-After
	started     time.Time
}

// attempt sends the request mk makes once, under the idle watchdog, with the client's token.
// A 2xx answer keeps the watchdog on its body until the body is closed.
func (c *Client) attempt(ctx context.Context, mk func() (*http.Request, error)) outcome {
	req, err := mk()
	if err != nil {
		return outcome{err: err}
	}
	o := outcome{started: time.Now()}
	actx, acancel := context.WithCancel(ctx)
	wd := newWatchdog(c.idle(), acancel)
	req = req.WithContext(actx)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = wd.watchUpload(req.Body)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	switch {
	case err != nil:
		wd.stop()
		acancel()
		if ctx.Err() != nil {
			o.err = ctx.Err()
			break
		}
		if wd.fired.Load() {
			err = wd.err()
		}
		o.last, o.unreachable = &errTransport{err}, true
	case resp.StatusCode < 300:
		if c.Budget != nil {
			c.Budget.Success()
		}
		resp.Body = &watchedBody{r: resp.Body, wd: wd, cancel: acancel}
		o.resp = resp
	default:
		apiErr := readAPIError(resp) // under the watchdog: a body that stalls ends the attempt
		wd.stop()
		resp.Body.Close()
		acancel()
		c.errorAnswer(resp, apiErr, &o)
	}
	return o
}

// errorAnswer sets o from an answer of 300 or more: an end of Do unless the error is worth
// another attempt (5xx, 429), with the answer's Retry-After.
func (c *Client) errorAnswer(resp *http.Response, apiErr *APIError, o *outcome) {
	if !apiErr.retryable() {
		if c.Budget != nil {
			c.Budget.Success() // the server is there and answered
		}
		o.err = apiErr
		if apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden {
			o.err = &ConfigError{Msg: fmt.Sprintf("the exit server at %s refused the token (%d %s): give the server's token with --token or IDVAULT_EXIT__TOKEN",
				c.display(), apiErr.Status, apiErr.Code)}
		}
		return
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		o.retryAfter = time.Duration(s) * time.Second
	}
	o.last, o.unreachable = apiErr, apiErr.unavailable()
}

// send is Do for a request whose body is in memory: method on c.URL+path with body, of
// contentType.
func (c *Client) send(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, error) {
	return c.sendFrom(ctx, method, path, contentType, int64(len(body)), func() io.Reader { return bytes.NewReader(body) })
}

// sendFrom is send for a body of size bytes that open reads, afresh for each attempt.
func (c *Client) sendFrom(ctx context.Context, method, path, contentType string, size int64, open func() io.Reader) (*http.Response, error) {
	return c.Do(ctx, func() (*http.Request, error) {
		var body io.Reader
		if size > 0 {
			body = open()
		}
		req, err := http.NewRequest(method, c.URL+path, body)
		if err != nil {
			return nil, err
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", contentType)
		return req, nil
	})
}

// sendRead is send for an answer read whole, up to limit bytes (a longer one is cut at limit
// for the caller's parser to refuse). An answer cut midway (the server killed or restarted
// while it sent it, a connection reset) is retried like a request that got no answer: under the
// client's Budget, with backoff, up to Attempts cut answers in a row. Only for requests that
// may be sent again (every exit route does the same thing twice) and answers the server never
// cuts on purpose (not a decrypt stream, which the server drops when a later chunk is bad).
func (c *Client) sendRead(ctx context.Context, method, path, contentType string, body []byte, limit int64) ([]byte, error) {
	return c.sendReadFrom(ctx, method, path, contentType, int64(len(body)), func() io.Reader { return bytes.NewReader(body) }, limit)
}

// sendReadFrom is sendRead for a body of size bytes that open reads, afresh for each attempt.
func (c *Client) sendReadFrom(ctx context.Context, method, path, contentType string, size int64, open func() io.Reader, limit int64) ([]byte, error) {
	return c.sendReadInto(ctx, method, path, contentType, size, open, limit, nil)
}

// sendReadInto is sendReadFrom that reads an answer of announced length into buffers of
// answers (nil: a new one).
func (c *Client) sendReadInto(ctx context.Context, method, path, contentType string, size int64, open func() io.Reader, limit int64, answers *answerBuffers) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		started := time.Now()
		resp, err := c.sendFrom(ctx, method, path, contentType, size, open)
		if err != nil {
			return nil, err
		}
		raw, err := readAnswer(resp, limit, answers)
		resp.Body.Close()
		switch {
		case err == nil:
			return raw, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		cut := &errTransport{fmt.Errorf("the answer was cut short: %w", err)}
		if attempt >= c.attempts() {
			return nil, fmt.Errorf("giving up after %d attempts: %w", attempt, cut)
		}
		if c.Budget != nil {
			if err := c.Budget.FailureSince(c.display(), cut, started); err != nil {
				return nil, err
			}
		}
		if err := c.wait(ctx, c.backoff(attempt-1, 0), cut); err != nil {
			return nil, err
		}
	}
}

// wait is the pause of d before a retry whose last failure was last. It ends early with
// ctx.Err() when ctx ends, and with the *UnavailableError of the client's Budget when the
// budget trips (by another request) or its outage reaches MaxOutage while this request waits:
// a backoff of up to 10 s never stretches a run past its budget.
func (c *Client) wait(ctx context.Context, d time.Duration, last error) error {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		var (
			tripped    <-chan struct{}
			atDeadline bool
		)
		if c.Budget != nil {
			tripped = c.Budget.Done()
			if dl, ok := c.Budget.deadline(); ok && time.Until(dl) < left {
				left, atDeadline = max(time.Until(dl), 0), true
			}
		}
		if left <= 0 && !atDeadline {
			return nil
		}
		t := time.NewTimer(left)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-tripped:
			t.Stop()
			return c.Budget.Err()
		case <-t.C:
		}
		if !atDeadline {
			return nil
		}
		if err := c.Budget.expire(c.display(), last); err != nil {
			return err
		}
		// A request succeeded meanwhile: the outage ended or started again later; wait on.
	}
}

// readAnswer reads resp's body whole, up to limit bytes: into one buffer of its announced
// length when it has one (from answers, when given).
func readAnswer(resp *http.Response, limit int64, answers *answerBuffers) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= limit {
		raw := answers.get(int(n))
		_, err := io.ReadFull(resp.Body, raw)
		if err != nil {
			answers.put(raw)
			return nil, err
		}
		return raw, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}
