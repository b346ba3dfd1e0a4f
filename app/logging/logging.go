// Package logging builds idvault's logger: log/slog, text or JSON, with per-request lines
// buffered so that logging every request costs a copy into memory rather than a write(2).
//
// Every line is written out at once (after whatever is buffered, so the order is kept) except
// the lines logged with the Bulk context, which the HTTP request log uses: those wait in a
// buffer for at most FlushDelay or until BufferSize bytes are pending. A crash (kill -9) can
// therefore lose the request lines of the last FlushDelay; warnings, errors and every other line
// are never held back.
package logging

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// FlushDelay and BufferSize bound how long and how much request log output waits.
const (
	FlushDelay = 50 * time.Millisecond
	BufferSize = 64 << 10
)

type bulkKey struct{}

// Bulk is the context to log high-volume lines with (one per HTTP request): they may wait up to
// FlushDelay before being written.
var Bulk = context.WithValue(context.Background(), bulkKey{}, true)

// Options say what to log: Level ("debug", "info", "warn", "error"; default info) and Format
// ("json" or text).
type Options struct {
	Level  string
	Format string
	// NoBuffer writes every line out at once, the request log's too (no FlushDelay).
	NoBuffer bool
	// NoFastFormat formats the request log's lines with slog's handler (see fastFormat).
	NoFastFormat bool
}

// New returns a logger writing to w and the Writer that buffers its bulk lines; Close the
// Writer before exiting so that nothing buffered is lost.
func New(o Options, w io.Writer) (*slog.Logger, *Writer) {
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.Level))
	bw := &Writer{w: w, direct: o.NoBuffer}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if o.Format == "json" {
		h = slog.NewJSONHandler(bw, opts)
	} else {
		h = slog.NewTextHandler(bw, opts)
	}
	fast := &fastFormat{json: o.Format == "json"}
	if o.NoFastFormat {
		fast = nil
	}
	return slog.New(flushing{h, bw, fast}), bw
}

// flushing writes every record that is not bulk out at once. Bulk records below warning level
// go through fast (nil once attributes or groups were added with With) when they can.
type flushing struct {
	slog.Handler
	w    *Writer
	fast *fastFormat
}

func (f flushing) Handle(ctx context.Context, r slog.Record) error {
	bulk, _ := ctx.Value(bulkKey{}).(bool)
	if bulk && f.fast != nil && r.Level < slog.LevelWarn {
		var attrs [8]slog.Attr
		if n, ok := recordAttrs(r, &attrs); ok && f.w.writeLine(f.fast, r.Time, r.Level, r.Message, attrs[:n]) {
			return nil
		}
	}
	err := f.Handler.Handle(ctx, r)
	if !bulk || r.Level >= slog.LevelWarn {
		if ferr := f.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (f flushing) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushing{f.Handler.WithAttrs(attrs), f.w, nil}
}

func (f flushing) WithGroup(name string) slog.Handler {
	return flushing{f.Handler.WithGroup(name), f.w, nil}
}

// Writer buffers what is written to it until Flush, a timer (FlushDelay after the first
// pending byte), or BufferSize pending bytes. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	pending bool // a timer is armed
	direct  bool // Options.NoBuffer: every write goes out at once
}

// Write buffers p.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), b.queuedLocked()
}

// queuedLocked writes the buffer out once BufferSize bytes are pending, or arms the timer that
// writes it FlushDelay later.
func (b *Writer) queuedLocked() error {
	if len(b.buf) >= BufferSize || b.direct {
		return b.flushLocked()
	}
	if !b.pending {
		b.pending = true
		time.AfterFunc(FlushDelay, func() { _ = b.Flush() })
	}
	return nil
}

// writeLine formats a bulk line straight into the buffer (see LogBulk and flushing.Handle);
// false, with nothing written, when f cannot format it.
func (b *Writer) writeLine(f *fastFormat, t time.Time, level slog.Level, msg string, attrs []slog.Attr) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.buf)
	var ok bool
	if b.buf, ok = f.appendLine(b.buf, t, level, msg, attrs); !ok {
		b.buf = b.buf[:n]
		return false
	}
	_ = b.queuedLocked() // a failed write of the log is not the request's error
	return true
}

// Flush writes out everything buffered.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	return b.flushLocked()
}

func (b *Writer) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Close writes out everything buffered. The Writer stays usable (lines logged afterwards are
// still written), so closing early loses nothing.
func (b *Writer) Close() error { return b.Flush() }
