package mail

import (
	"context"
	"sync"
	"time"
)

// pool bounds and reuses SMTP connections. A slot is held for as long as a connection is in
// use or being dialled, so at most size connections exist at once (idle ones included:
// an idle connection is only kept while a slot is free for it, see put).
type pool struct {
	slots       chan struct{}
	idleTimeout time.Duration
	dial        func(context.Context) (*conn, error)

	mu     sync.Mutex
	idle   []*conn // most recently used last
	closed bool

	stop chan struct{}
	done chan struct{}
}

func newPool(size int, idleTimeout time.Duration, dial func(context.Context) (*conn, error)) *pool {
	p := &pool{
		slots:       make(chan struct{}, size),
		idleTimeout: idleTimeout,
		dial:        dial,
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	go p.janitor()
	return p
}

// get returns a connection and whether it was reused from the idle list. With fresh, an
// idle connection is never reused. The caller must hand the connection back with put or
// discard.
func (p *pool) get(ctx context.Context, fresh bool) (c *conn, reused bool, err error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, newContextError(ctx, "waiting for a free connection")
	}
	c, closed := p.takeIdle(fresh)
	if closed {
		<-p.slots
		return nil, false, &SendError{Stage: StageClosed, Err: ErrClosed}
	}
	if c != nil {
		return c, true, nil
	}
	c, err = p.dial(ctx)
	if err != nil {
		<-p.slots
		return nil, false, err
	}
	return c, false, nil
}

// takeIdle pops the most recently used idle connection that has not expired (none with
// fresh); expired ones are closed on the way. closed reports a closed pool.
func (p *pool) takeIdle(fresh bool) (c *conn, closed bool) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, true
	}
	if fresh {
		p.mu.Unlock()
		return nil, false
	}
	var expired []*conn
	now := time.Now()
	for len(p.idle) > 0 && c == nil {
		last := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if now.Sub(last.lastUsed) >= p.idleTimeout {
			expired = append(expired, last)
			continue
		}
		c = last
	}
	p.mu.Unlock()
	for _, e := range expired {
		e.abort()
	}
	return c, false
}

// put returns a healthy connection for reuse.
func (p *pool) put(c *conn) {
	c.lastUsed = time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.quit()
	} else {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	<-p.slots
}

// discard closes a connection that must not be reused.
func (p *pool) discard(c *conn) {
	c.abort()
	<-p.slots
}

// janitor closes connections that stayed idle for idleTimeout.
func (p *pool) janitor() {
	defer close(p.done)
	tick := p.idleTimeout / 2
	if tick < 10*time.Millisecond {
		tick = 10 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			var expired []*conn
			kept := p.idle[:0]
			for _, c := range p.idle {
				if now.Sub(c.lastUsed) >= p.idleTimeout {
					expired = append(expired, c)
				} else {
					kept = append(kept, c)
				}
			}
			clear(p.idle[len(kept):])
			p.idle = kept
			p.mu.Unlock()
			for _, c := range expired {
				c.quit()
			}
		}
	}
}

// close closes the idle connections and stops the janitor; connections in use are closed
// when they are handed back. It is safe to call more than once.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	for _, c := range idle {
		c.quit()
	}
}

// isClosed reports whether close was called.
func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
