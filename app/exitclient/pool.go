package exitclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Pool decrypts through several exit servers over the same dump database (`idvault exit
// decrypt-table` with several --url): each request goes to the next server in turn, and one
// that fails to answer (refused, reset, 5xx, 429, an answer cut short) is left aside for a
// while (doubling from poolCooldown up to poolMaxCooldown) while its requests go to the others.
// One RetryBudget covers the pool: the run stops with an *UnavailableError only once no
// request to any server has succeeded for its MaxOutage. Safe for concurrent use.
type Pool struct {
	clients []*Client
	budget  *RetryBudget
	answers *answerBuffers // DecryptEach's
	// Jobs is the number of requests one Decrypt sends at once (default 4).
	Jobs int

	next  atomic.Uint64
	mu    sync.Mutex
	until []time.Time // a server left aside is not tried before
	fails []int       // failures in a row, per server
}

const (
	poolCooldown    = 250 * time.Millisecond
	poolMaxCooldown = 5 * time.Second
	// poolAnswerBuffers is how many answer buffers DecryptEach keeps for reuse: about the
	// requests two calls have in flight at once.
	poolAnswerBuffers = 8
)

// NewPool returns a pool of the servers at urls, sharing token, with a retry budget of
// maxOutage (DefaultMaxOutage when not positive).
func NewPool(urls []string, token string, maxOutage time.Duration) *Pool {
	p := &Pool{budget: NewRetryBudget(maxOutage), answers: newAnswerBuffers(poolAnswerBuffers), until: make([]time.Time, len(urls)), fails: make([]int, len(urls))}
	for _, u := range urls {
		c := New(u, token)
		// Each request tries its server twice; the pool then tries the others, under its budget.
		c.Budget, c.Attempts, c.Backoff = nil, 2, 50*time.Millisecond
		p.clients = append(p.clients, c)
	}
	return p
}

// Probe checks every server before any work, as Client.Probe does (a bad URL, a refused token,
// something that is not an exit server: *ConfigError; a server that does not answer within the
// budget: *UnavailableError).
func (p *Pool) Probe(ctx context.Context) error {
	for _, c := range p.clients {
		q := *c
		q.Budget, q.Attempts = NewRetryBudget(p.budget.maxOutage()), 0
		if err := q.Probe(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Decrypt decrypts items: the small ones in POST /v1/decrypt-batch requests under the
// server's limits, one of BigValue bytes or more alone in POST /v1/decrypt, several requests
// at once over the servers. It returns one result per item, in order; the error is for the
// run (every server gone past the budget, a refused token, a malformed answer).
func (p *Pool) Decrypt(ctx context.Context, items [][]byte) ([]BatchResult, error) {
	out := make([]BatchResult, len(items))
	err := p.decrypt(ctx, items, nil, func(i int, r BatchResult) { out[i] = r })
	return out, err
}

// DecryptEach is Decrypt that hands each item's result to each as soon as its answer is in,
// once per item, in no particular order and from several goroutines at once, and reads the
// answers into buffers it reuses: a result's Clear is valid only during its call. For a caller
// that copies the clear bytes where they go (exit decrypt-table), it allocates no answer per
// request.
func (p *Pool) DecryptEach(ctx context.Context, items [][]byte, each func(i int, r BatchResult)) error {
	return p.decrypt(ctx, items, p.answers, each)
}

// decrypt is Decrypt and DecryptEach: answers nil allocates each answer.
func (p *Pool) decrypt(ctx context.Context, items [][]byte, answers *answerBuffers, each func(int, BatchResult)) error {
	type job struct{ from, to int } // items[from:to] in one batch, or items[from] alone (to < 0)
	var jobs []job
	start, size := 0, 0
	flush := func(end int) {
		if end > start {
			jobs = append(jobs, job{start, end})
		}
	}
	for i, it := range items {
		switch {
		case len(it) >= BigValue:
			flush(i)
			jobs = append(jobs, job{i, -1})
			start, size = i+1, 0
			continue
		case i-start >= BatchItems || size+len(it)+5 > BatchBytes:
			flush(i)
			start, size = i, 0
		}
		size += len(it) + 5
	}
	flush(len(items))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once     sync.Once
		firstErr error
	)
	jobsN := p.Jobs
	if jobsN <= 0 {
		jobsN = 4
	}
	InParallel(ctx, jobsN, jobs, func(j job) {
		var err error
		if j.to < 0 {
			var res BatchResult
			if res, err = p.alone(ctx, items[j.from]); err == nil {
				each(j.from, res)
			}
		} else {
			// Results are handed on only from an answer parsed whole, so never twice.
			err = p.do(ctx, func(c *Client) error {
				return c.decryptBatchEach(ctx, items[j.from:j.to], answers, func(i int, r BatchResult) { each(j.from+i, r) })
			})
		}
		if err != nil {
			once.Do(func() { firstErr = err; cancel() })
		}
	})
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// alone decrypts one big ciphertext through POST /v1/decrypt. An answer cut midway is asked
// for again (of another server when there is one: a server killed while it answered); cut
// twice it is the value's failure, stream_aborted (the server cuts a stream whose later chunk
// is bad). An error answer about the ciphertext is its failure too.
func (p *Pool) alone(ctx context.Context, ct []byte) (BatchResult, error) {
	var (
		res  BatchResult
		cuts int
	)
	err := p.do(ctx, func(c *Client) error {
		resp, err := c.send(ctx, http.MethodPost, "/v1/decrypt", "application/octet-stream", ct)
		var api *APIError
		if errors.As(err, &api) && !api.retryable() {
			res = BatchResult{Code: api.Code, Message: api.Message}
			return nil
		}
		if err != nil {
			return err
		}
		clear, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if cuts++; cuts >= 2 {
				res = BatchResult{Code: "stream_aborted", Message: ErrStreamAborted.Error()}
				return nil
			}
			return &errTransport{fmt.Errorf("%w: %v", ErrStreamAborted, err)}
		}
		res = BatchResult{Clear: clear}
		return nil
	})
	return res, err
}

// do sends through the next server not left aside, until send succeeds, fails for another
// reason than the server's (returned as is), or the pool's budget trips.
func (p *Pool) do(ctx context.Context, send func(*Client) error) error {
	for {
		if err := p.budget.Err(); err != nil {
			return err
		}
		i, wait := p.pick()
		if i < 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-p.budget.Done():
				t.Stop()
				return p.budget.Err()
			case <-t.C:
			}
			continue
		}
		started := time.Now()
		err := send(p.clients[i])
		switch {
		case err == nil:
			p.budget.Success()
			p.mark(i, false)
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !serverFailed(err):
			return err
		}
		p.mark(i, true)
		if berr := p.budget.FailureSince(p.clients[i].display(), err, started); berr != nil {
			return berr
		}
	}
}

// serverFailed reports whether err says the server could not serve (rather than refusing the
// request): worth sending to another.
func serverFailed(err error) bool {
	var api *APIError
	return errors.As(err, new(*errTransport)) || errors.As(err, &api) && api.retryable()
}

// pick returns the next server in turn that is not left aside, or -1 and how long until one
// is back.
func (p *Pool) pick() (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.clients)
	first := int(p.next.Add(1) % uint64(n))
	now := time.Now()
	soonest := time.Duration(-1)
	for k := range n {
		i := (first + k) % n
		if !now.Before(p.until[i]) {
			return i, 0
		}
		if d := p.until[i].Sub(now); soonest < 0 || d < soonest {
			soonest = d
		}
	}
	return -1, soonest
}

// mark records an answer of server i: a failure leaves it aside, longer each time in a row.
func (p *Pool) mark(i int, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !failed {
		p.fails[i] = 0
		return
	}
	p.fails[i]++
	d := poolCooldown << min(p.fails[i]-1, 5)
	p.until[i] = time.Now().Add(min(d, poolMaxCooldown))
}
