package exitclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdle is how long a request may see no byte move either way (upload or answer) before
// it is abandoned as hung, when Client.Idle is zero.
const DefaultIdle = 60 * time.Second

// watchdog cancels one attempt when neither its upload nor its answer moved for idle: a server
// that hangs or a network that drops packets silently, which no connection error reports. It
// looks every quarter of idle rather than being reset on each read, so that counting costs an
// atomic add (no timer reset per read), and an upload from a file is followed by the file's
// offset: the body stays the *os.File that net/http hands to sendfile.
type watchdog struct {
	idle   time.Duration
	cancel context.CancelFunc
	t      *time.Timer
	fired  atomic.Bool
	moved  atomic.Int64 // bytes read from the answer, and from an upload that is not a file

	mu       sync.Mutex
	file     *os.File // the upload, when it is a file
	last     int64
	pos      int64 // the file's offset when last seen
	lastMove time.Time
	stopped  bool
}

func newWatchdog(idle time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{idle: idle, cancel: cancel, lastMove: time.Now()}
	// Under the lock: with a short period the first look may run before AfterFunc returns,
	// and look reads w.t.
	w.mu.Lock()
	w.t = time.AfterFunc(w.period(), w.look)
	w.mu.Unlock()
	return w
}

// period is the time between looks: a quarter of idle, so that a hang is seen within 1.25 idle.
func (w *watchdog) period() time.Duration { return max(w.idle/4, time.Millisecond) }

// look runs every period: cancel when nothing moved for idle.
func (w *watchdog) look() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if w.file != nil {
		if off, err := w.file.Seek(0, io.SeekCurrent); err == nil && off > w.pos {
			w.pos = off // (a closed file keeps its last offset)
		}
	}
	if now := w.moved.Load() + w.pos; now != w.last {
		w.last, w.lastMove = now, time.Now()
	}
	if time.Since(w.lastMove) < w.idle {
		w.t.Reset(w.period())
		return
	}
	w.fired.Store(true)
	w.cancel()
}

// watchUpload follows the request body: a file by its offset, anything else by counting reads.
func (w *watchdog) watchUpload(body io.ReadCloser) io.ReadCloser {
	if f, ok := body.(*os.File); ok {
		w.mu.Lock()
		w.file = f
		w.mu.Unlock()
		return body
	}
	return &countingReader{r: body, n: &w.moved}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}

func (w *watchdog) err() error { return fmt.Errorf("no byte moved for %s", w.idle) }

// countingReader adds the bytes it reads to n.
type countingReader struct {
	r io.ReadCloser
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// watchedBody is an answer's body under its attempt's watchdog: reads count as moving, a read
// cut by the watchdog says so, and Close ends the attempt.
type watchedBody struct {
	r      io.ReadCloser
	wd     *watchdog
	cancel context.CancelFunc
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.wd.moved.Add(int64(n))
	if err != nil && err != io.EOF && b.wd.fired.Load() {
		err = b.wd.err()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.wd.stop()
	err := b.r.Close()
	b.cancel()
	return err
}
