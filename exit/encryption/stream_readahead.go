package encryption

import (
	"errors"
	"io"
)

// WithReadAhead makes a stream format read its encrypted chunks from the
// source in a goroutine of their own, ahead of decryption, from the first
// Read or WriteTo on: reading chunk i+1 overlaps decrypting chunk i, and
// with WriteTo a third goroutine writes the clear text of chunk i-1 while
// chunk i decrypts (with two cores, a stream then moves at the rate of its
// slowest stage instead of the sum of all three). A Read that verifies the
// first chunk before an answer starts (as the exit server does) therefore
// leaves the next chunks already coming in when WriteTo takes over. The
// decrypter holds three chunk buffers instead of one, one per stage; a
// chunk's clear text is still returned or written only after its tag
// verified, in order, and nothing after a failed chunk. Buffers of the
// default chunk size are kept for later streams once this one is over
// (cleared first, at most chunkBufferCache of them), so a server decrypting
// stream after stream neither allocates nor collects megabytes for each.
//
// interrupt must make a Read of the source that is blocked, or would block,
// return promptly (for a network connection: a read deadline in the past).
// The decrypter calls it when it stops before the end of the stream (a bad
// chunk, a failed write, or Close before the end) and returns only once the
// reading goroutine ended, so the source is never read after the call that
// failed (or Close) returned. Sources that are io.WriterTo are not affected
// by this option: their own WriteTo pushes chunks without a copy.
//
// Close must be called when a stream is abandoned before its end: it stops
// the reading goroutine. After WriteTo it gives the buffers back to be kept
// for later streams (without it they are left to the garbage collector).
func WithReadAhead(interrupt func()) Option {
	return func(c *decryptConfig) { c.interrupt = interrupt }
}

// readChunk is one encrypted chunk read ahead: buf[:n] holds it (a short n
// is the final chunk), or err tells why reading failed.
type readChunk struct {
	buf []byte
	n   int
	err error
}

// readAheadBuffers is the number of chunk buffers of the read-ahead
// pipeline: one per stage, so that reading, decrypting and writing never
// wait for a buffer (with two, the reader would wait for the writer;
// app/exitserver's BenchmarkStream64MiBFormat11VsRawOpen measures the pipeline).
const readAheadBuffers = 3

// pipeline is a stream's read-ahead: the reading goroutine's channels, and
// the buffer whose clear text Read is returning. Exactly readAheadBuffers
// buffers (nil until data arrives) circulate from free to the reader, to
// full, to the decrypter, to the writer or Read, and back to free, each in
// one place at a time, so no send on these channels ever blocks.
type pipeline struct {
	free  chan []byte
	full  chan readChunk
	stop  chan struct{}
	cur   []byte // the buffer d.out points into (Read), given back once consumed
	ended bool   // the reader ended: full was drained to its close
}

// readingAhead reports whether chunks come through the read-ahead pipeline.
func (d *streamDecrypter) readingAhead() bool {
	if d.interrupt == nil {
		return false
	}
	_, pushes := d.src.(io.WriterTo)
	return !pushes
}

// startPipeline starts the reading goroutine (once).
func (d *streamDecrypter) startPipeline() *pipeline {
	if d.pipe != nil {
		return d.pipe
	}
	p := &pipeline{
		free: make(chan []byte, readAheadBuffers),
		full: make(chan readChunk, readAheadBuffers),
		stop: make(chan struct{}),
	}
	p.free <- d.buf
	d.buf = nil
	for range readAheadBuffers - 1 {
		p.free <- nil // the other buffers are allocated as data arrives, as the first was
	}
	first := 0
	if d.index == 0 && d.v != V11 {
		first = v48Header // chunk 0 of formats 4 and 8 starts with the header already read
	}
	go d.readAhead(p.free, p.full, p.stop, first)
	d.pipe = p
	return p
}

// take decrypts in place a chunk the reader filled. On a failure its buffer
// goes back to free and the caller stops the pipeline (abort).
func (d *streamDecrypter) take(p *pipeline, c readChunk) (clearChunk, error) {
	if d.index == 0 && d.v != V11 {
		copy(c.buf, d.header) // the reader left room for it
	}
	pt, err := d.decryptRead(c.buf, c.n, c.err)
	if err != nil {
		p.free <- c.buf // never blocks: room for every buffer
		return clearChunk{}, err
	}
	if d.final {
		for range p.full { // the reader stopped after the short chunk: nothing comes
		}
		p.ended = true
	}
	return clearChunk{buf: c.buf, pt: pt}, nil
}

// nextAhead is next for Read through the pipeline: it gives back the buffer
// whose clear text was consumed and puts the next chunk's in d.out.
func (d *streamDecrypter) nextAhead() error {
	if d.final {
		d.releasePipeline()
		return io.EOF
	}
	p := d.startPipeline()
	if p.cur != nil {
		p.free <- p.cur
		p.cur = nil
	}
	c, err := d.take(p, <-p.full) // the reader sends an error or a short chunk before it ends
	if err != nil {
		return d.abort(err)
	}
	p.cur, d.out = c.buf, c.pt
	return nil
}

// abort stops a pipeline after a failure or a Close: a reader still running
// is interrupted and waited for, and the buffers go back to the cache
// (one a writer still holds goes to free, for Close to give back). It returns err.
func (d *streamDecrypter) abort(err error) error {
	p := d.pipe
	if p == nil {
		return err
	}
	if !p.ended {
		close(p.stop)
		d.interrupt()
		for c := range p.full {
			putChunkBuffer(c.buf)
		}
		p.ended = true
	}
	d.releasePipeline()
	return err
}

// releasePipeline gives the buffers of a pipeline whose reader ended back to
// the cache: those in free and the one Read was returning (d.out is dropped).
// A later call gives back what came to free since (a buffer a failed
// WriteTo's writer returned after the abort), so Close sweeps it.
func (d *streamDecrypter) releasePipeline() {
	p := d.pipe
	if p == nil || !p.ended {
		return
	}
	for len(p.free) > 0 {
		putChunkBuffer(<-p.free)
	}
	putChunkBuffer(p.cur)
	p.cur, d.out = nil, nil
}

// Close stops the read-ahead of a stream abandoned before its end (the
// reader interrupted and waited for) and gives its buffers back, cleared, to
// be kept for later streams; later reads fail. After the end, or without
// read-ahead, it has nothing to stop.
func (d *streamDecrypter) Close() error {
	if d.err == nil || d.err == io.EOF {
		d.err = errClosed
	}
	d.out = nil
	_ = d.abort(nil)
	return nil
}

// errClosed is what a read after Close returns.
var errClosed = errors.New("decrypt: read after close")

// writeToReadAhead is WriteTo as a three-stage pipeline over three chunk
// buffers: a goroutine reads chunk i+1 while this one decrypts chunk i in
// place and a third goroutine writes the clear text of chunk i-1. A buffer
// goes from the reader to the decrypter to the writer and back, so a clear
// chunk reaches w only after its tag verified, in order, and nothing after a
// chunk that failed. What Read left of the current chunk is written first.
func (d *streamDecrypter) writeToReadAhead(w io.Writer) (int64, error) {
	p := d.startPipeline()
	verified := make(chan clearChunk, readAheadBuffers)
	wr := &chunkWriter{w: w, done: make(chan struct{})}
	go wr.run(verified, p.free, p.stop)
	if len(d.out) > 0 {
		verified <- clearChunk{buf: p.cur, pt: d.out} // never blocks: room for every buffer
		p.cur, d.out = nil, nil
	} else if p.cur != nil {
		p.free <- p.cur
		p.cur = nil
	}
	var err error
	for err == nil && !d.final {
		select {
		case c := <-p.full:
			var cc clearChunk
			if cc, err = d.take(p, c); err == nil {
				verified <- cc // never blocks: room for every buffer
			}
		case <-wr.done:
			err = wr.err // the writer stops early only on a failed write
		}
	}
	if err != nil {
		_ = d.abort(err) // before waiting for the writer: the interrupt ends a blocked write
	}
	close(verified)
	<-wr.done
	if err == nil && wr.err != nil {
		err = wr.err
		_ = d.abort(err)
	}
	for c := range verified { // left unwritten by a failed writer
		putChunkBuffer(c.buf)
	}
	// The buffers of a stream that ended well are cleared and kept by Close, after the caller
	// finished its answer: clearing three chunks is not on the way to its last byte.
	if err != nil {
		d.err = err
	} else {
		d.err = io.EOF
	}
	return wr.total, err
}

// clearChunk is the verified clear text pt of a chunk, inside its buffer buf.
type clearChunk struct {
	buf, pt []byte
}

// chunkWriter writes verified chunks in order and gives their buffers back to
// the reader. It stops at the first failed write; done is closed when it
// returned, err and total are then final.
type chunkWriter struct {
	w     io.Writer
	total int64
	err   error
	done  chan struct{}
}

func (cw *chunkWriter) run(verified <-chan clearChunk, free chan<- []byte, stop <-chan struct{}) {
	defer close(cw.done)
	for c := range verified {
		select {
		case <-stop:
			putChunkBuffer(c.buf) // the stream failed: drop what is left
			continue
		default:
		}
		n, err := cw.w.Write(c.pt)
		cw.total += int64(n)
		free <- c.buf // never blocks: room for every buffer
		if err != nil {
			cw.err = err
			return
		}
	}
}

// readAhead fills the buffers it gets from free with whole chunks (the first
// one from offset first, the header being put there by the decrypting side)
// and hands them over through full, until a short chunk, an error, or stop.
func (d *streamDecrypter) readAhead(free <-chan []byte, full chan<- readChunk, stop <-chan struct{}, first int) {
	defer close(full)
	off := first
	for {
		var buf []byte
		select {
		case <-stop:
			return
		default:
		}
		select {
		case buf = <-free:
		case <-stop:
			return
		}
		if len(buf) == 0 {
			buf = cachedChunkBuffer(d.size) // a whole chunk kept by an earlier stream
		}
		buf, n, err := fillChunk(d.src, buf, off, d.size, readAheadSteps)
		off = 0
		full <- readChunk{buf: buf, n: n, err: err} // never blocks: room for every buffer
		if err != nil || n < d.size {
			return
		}
	}
}

// chunkBufferCache is how many buffers of the default chunk size are kept
// between streams: two streams' worth of read-ahead.
const chunkBufferCache = 2 * readAheadBuffers

// chunkBuffers holds buffers of the default chunk size between streams, all
// zero. Only the read-ahead pipeline gives buffers back: it alone knows when
// nothing refers to one any more (every goroutine that held it has ended).
// A channel, not a sync.Pool: a pool is emptied by every other garbage
// collection, and a 1 MiB buffer allocated again costs its page faults.
var chunkBuffers = make(chan []byte, chunkBufferCache)

// cachedChunkBuffer returns a kept buffer of size bytes, or nil.
func cachedChunkBuffer(size int) []byte {
	if size != DefaultChunkSize {
		return nil
	}
	select {
	case b := <-chunkBuffers:
		return b
	default:
		return nil
	}
}

// getChunkBuffer returns a zeroed buffer of size bytes: a kept one for the
// default chunk size when there is one, a new one otherwise.
func getChunkBuffer(size int) []byte {
	if b := cachedChunkBuffer(size); b != nil {
		return b
	}
	return make([]byte, size)
}

// putChunkBuffer gives back a buffer nothing refers to any more. It is
// cleared first: it held a stream's clear text, which must neither linger
// nor ever reach another stream's output.
func putChunkBuffer(buf []byte) {
	if len(buf) != DefaultChunkSize {
		return
	}
	clear(buf)
	select {
	case chunkBuffers <- buf:
	default:
	}
}
