package encryption

import (
	"fmt"
	"io"
	"sync"
)

// WithReadAhead makes WriteTo of a stream format read the next encrypted
// chunk from the source in a second goroutine while it decrypts and writes
// the current one, so reading the input overlaps decryption and output
// (with two cores, a stream then moves at the rate of its slowest stage
// instead of the sum of all three). The decrypter then holds three chunk
// buffers instead of one, one per stage; a chunk's clear text is still
// written only after its tag verified, in order, and nothing after a failed
// chunk. Buffers of the default chunk size are reused by later streams once
// this one is over (cleared first), so a server decrypting stream after
// stream does not allocate, and collect, megabytes for each.
//
// interrupt must make a Read of the source that is blocked, or would block,
// return promptly (for a network connection: a read deadline in the past).
// WriteTo calls it when it stops before the end of the stream (a bad chunk
// or a failed write) and returns only once the reading goroutine ended, so
// the source is never read after WriteTo returned. Read, and sources that
// are io.WriterTo, are not affected by this option.
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
// wait for a buffer (with two, the reader waited for the writer; the README
// gives the before and after of app/exitserver's 64 MiB stream benchmark).
const readAheadBuffers = 3

// writeToReadAhead is WriteTo as a three-stage pipeline over three chunk
// buffers: a goroutine reads chunk i+1 while this one decrypts chunk i in
// place and a third goroutine writes the clear text of chunk i-1. A buffer
// goes from the reader to the decrypter to the writer and back, so a clear
// chunk reaches w only after its tag verified, in order, and nothing after a
// chunk that failed.
func (d *streamDecrypter) writeToReadAhead(w io.Writer) (int64, error) {
	free := make(chan []byte, readAheadBuffers)
	full := make(chan readChunk, readAheadBuffers)
	verified := make(chan clearChunk, readAheadBuffers)
	stop := make(chan struct{})
	free <- d.buf
	for range readAheadBuffers - 1 {
		free <- nil // the other buffers are allocated as data arrives, as the first was
	}
	d.buf = nil
	// The buffers given back once neither goroutine runs any more go to later streams.
	defer func() {
		for len(free) > 0 {
			putChunkBuffer(<-free)
		}
	}()
	first := 0
	if d.index == 0 && d.v != V11 {
		first = v48Header // chunk 0 of formats 4 and 8 starts with the header already read
	}
	go d.readAhead(free, full, stop, first)
	wr := &chunkWriter{w: w, done: make(chan struct{})}
	go wr.run(verified, free, stop)

	// finish stops both goroutines and returns once neither touches the source or w.
	finish := func(err error) (int64, error) {
		close(stop)
		d.interrupt()
		for c := range full {
			putChunkBuffer(c.buf)
		}
		close(verified)
		<-wr.done
		return wr.total, err
	}
	for {
		var c readChunk
		select {
		case c = <-full:
		case <-wr.done:
			return finish(wr.err)
		}
		if c.err != nil {
			return finish(fmt.Errorf("decrypt %s chunk %d: %w", d.v, d.index, c.err))
		}
		if c.n == 0 {
			return finish(d.missingFinal())
		}
		if d.index == 0 && d.v != V11 {
			copy(c.buf, d.header)
		}
		pt, err := d.decryptChunk(c.buf[:c.n], true)
		if err != nil {
			return finish(err)
		}
		verified <- clearChunk{buf: c.buf, pt: pt} // never blocks: room for every buffer
		if d.final {
			d.err = io.EOF
			for range full { // the reader stopped after the short chunk: nothing comes
			}
			close(verified)
			<-wr.done
			return wr.total, wr.err
		}
	}
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
			continue // the stream failed: drop what is left
		default:
		}
		n, err := cw.w.Write(c.pt)
		cw.total += int64(n)
		if err != nil {
			cw.err = err
			return
		}
		free <- c.buf // never blocks: room for every buffer
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
		buf, n, err := fillChunk(d.src, buf, off, d.size)
		off = 0
		full <- readChunk{buf: buf, n: n, err: err} // never blocks: room for every buffer
		if err != nil || n < d.size {
			return
		}
	}
}

// readAheadFirstBuffer is the first size of each of the read-ahead's chunk buffers.
const readAheadFirstBuffer = 64 << 10

// fillChunk reads up to size bytes into buf from offset off, growing buf as
// data arrives (first to readAheadFirstBuffer, then to size, never beyond),
// and returns the buffer and the bytes in it; fewer than size means the
// source ended. An offset counts as bytes in the buffer.
func fillChunk(src io.Reader, buf []byte, off, size int) ([]byte, int, error) {
	n := off
	if first := min(size, max(off, readAheadFirstBuffer)); len(buf) < first {
		buf = make([]byte, first)
	}
	for n < size {
		if n == len(buf) {
			grown := getChunkBuffer(size)
			copy(grown, buf[:n])
			buf = grown
		}
		m, err := io.ReadFull(src, buf[n:])
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return buf, n, nil
		}
		if err != nil {
			return buf, n, fmt.Errorf("read encrypted stream: %w", err)
		}
	}
	return buf, n, nil
}

// chunkBuffers holds buffers of the default chunk size between streams. Only
// the read-ahead pipeline gives buffers back: it alone knows when nothing
// refers to one any more (every goroutine that held it has ended).
var chunkBuffers = sync.Pool{New: func() any { return new([]byte) }}

// getChunkBuffer returns a zeroed buffer of size bytes: a reused one for the
// default chunk size, a new one otherwise. (A reused buffer held another
// stream's clear text: it is cleared, so that nothing of one stream can ever
// reach another's output.)
func getChunkBuffer(size int) []byte {
	if size != DefaultChunkSize {
		return make([]byte, size)
	}
	p := chunkBuffers.Get().(*[]byte)
	if len(*p) != size {
		return make([]byte, size)
	}
	clear(*p)
	return *p
}

// putChunkBuffer gives back a buffer nothing refers to any more.
func putChunkBuffer(buf []byte) {
	if len(buf) == DefaultChunkSize {
		chunkBuffers.Put(&buf)
	}
}
