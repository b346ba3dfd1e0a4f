package exitclient

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// DefaultIdle is how long a request may see no byte move either way (upload or answer) before
// it is abandoned as hung, when Client.Idle is zero.
const DefaultIdle = 60 * time.Second

// watchdog cancels one attempt when neither its upload nor its answer moved for idle: a server
// that hangs or a network that drops packets silently, which no connection error reports.
type watchdog struct {
	idle  time.Duration
	t     *time.Timer
	fired atomic.Bool
}

func newWatchdog(idle time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{idle: idle}
	w.t = time.AfterFunc(idle, func() {
		w.fired.Store(true)
		cancel()
	})
	return w
}

func (w *watchdog) kick()      { w.t.Reset(w.idle) }
func (w *watchdog) stop()      { w.t.Stop() }
func (w *watchdog) err() error { return fmt.Errorf("no byte moved for %s", w.idle) }

// watchedReader kicks the watchdog on every read that moves bytes.
type watchedReader struct {
	r  io.ReadCloser
	wd *watchdog
}

func (b *watchedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.wd.kick()
	}
	return n, err
}

func (b *watchedReader) Close() error { return b.r.Close() }

// watchedBody is an answer's body under its attempt's watchdog: reads kick it, a read cut by
// it says so, and Close ends the attempt.
type watchedBody struct {
	watchedReader
	cancel context.CancelFunc
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.watchedReader.Read(p)
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
