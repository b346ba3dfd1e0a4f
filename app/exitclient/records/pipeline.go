package records

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/idvault/idvault/app/exitclient"
)

// Decrypt reads records from in, decrypts the named fields through the exit server c
// (POST /v1/decrypt-batch, several batches in flight) and writes every record to out in input
// order, with the fields that decrypted replaced by their clear value and everything else
// byte for byte as it came. A field that does not decrypt keeps its ciphertext and is given
// to opts.Errors. Memory stays bounded by the batches in flight, whatever the input's size.
// The error is for the run as a whole: unreadable input, the server unreachable after the
// retries or refusing the token, ctx done, out failing; out then holds the first records, each
// whole (the CSV header first), and the caller ends it (StopWriter.Stop for a stream). An input
// without a data record is ErrNoRecord, and out is left untouched, except a CSV header alone: that
// is an empty table (psql's \copy of one), so its header is written and the run succeeds.
func Decrypt(ctx context.Context, c *exitclient.Client, in io.Reader, out io.Writer, opts Options) (Report, error) {
	p, err := newPipeline(c, in, opts)
	if err != nil {
		return Report{}, err
	}
	p.start(ctx)
	defer p.cancel()
	return p.write(out)
}

// pipeline is one run of Decrypt, in four stages: read (records into batches, in one
// goroutine), batch (each record's ciphertexts put in the batch as it is read: recBatch.add),
// send (jobs goroutines, one request per batch: recBatch.send) and write (the caller's
// goroutine: the batches in input order, each once its answer is in).
type pipeline struct {
	c      *exitclient.Client
	opts   Options
	rr     recordReader
	rawMem *arena // the records' bytes, detached into each batch
	quote  func(dst, v []byte) []byte
	jobs   int

	ctx     context.Context
	cancel  context.CancelFunc
	pending chan *recBatch // every batch in input order, for write (up to jobs ahead)
	work    chan *recBatch // every batch, for send
	wg      sync.WaitGroup // read and send
	readErr error          // why read stopped before the input's end (set before pending closes)
	rep     Report         // written by write only
}

// newPipeline checks opts and opens the reader of in; nothing runs yet.
func newPipeline(c *exitclient.Client, in io.Reader, opts Options) (*pipeline, error) {
	if _, err := DecodeCiphertext(opts.Encoding, nil); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if _, err := EncodeClear(nil, opts.ClearEncoding, nil); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	p := &pipeline{c: c, opts: opts, rawMem: &arena{}, quote: quoteCSV, jobs: opts.Jobs}
	rr, err := newRecordReader(opts.Format, in, opts.Fields, p.rawMem)
	if err != nil {
		return nil, err
	}
	if opts.Key != "" {
		if err := rr.setKey(opts.Key); err != nil {
			return nil, err
		}
	}
	p.rr = rr
	if opts.Format == FormatJSONL {
		p.quote = quoteJSON
	}
	if p.jobs <= 0 {
		p.jobs = 4
	}
	return p, nil
}

// start runs the read stage and jobs send stages, under a context of their own that cancel
// ends.
func (p *pipeline) start(ctx context.Context) {
	p.ctx, p.cancel = context.WithCancel(ctx)
	p.pending = make(chan *recBatch, p.jobs)
	p.work = make(chan *recBatch)
	p.wg.Add(1 + p.jobs)
	go p.read()
	for range p.jobs {
		go p.send()
	}
}

// read is the read stage: records into batches until the input ends (a batch full, or the
// last, is handed on), the input fails (readErr) or the run stops.
func (p *pipeline) read() {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.pending)
	b := newRecBatch()
	for {
		rec, err := p.rr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.readErr = err
			return
		}
		b.add(rec, p.opts.Encoding)
		if b.full() {
			if !p.hand(b) {
				return
			}
			b = newRecBatch()
		}
	}
	if len(b.recs) > 0 {
		p.hand(b)
	}
}

// hand gives b, with the records' bytes read so far, to write (first, so that it keeps the
// input's order) and to send. It is false when the run stopped meanwhile.
func (p *pipeline) hand(b *recBatch) bool {
	b.raw = p.rawMem.detach()
	select {
	case p.pending <- b:
	case <-p.ctx.Done():
		return false
	}
	select {
	case p.work <- b:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// send is one send stage: a request per batch (recBatch.send), done closed once it is in.
func (p *pipeline) send() {
	defer p.wg.Done()
	for b := range p.work {
		b.send(p.ctx, p.c, p.opts, p.quote)
		close(b.done)
	}
}

// write is the write stage: every batch, in input order, once its answer is in, to out.
//
// Records go out in writes that each end on a record boundary (never bufio's cut at its
// buffer's size), and what is held when the run stops is dropped: standard output stopped at
// any point ends on a whole record, and StopWriter's line after it is the one a loader fails
// on (a cut record would be printed by the loader's error, its clear values with it).
// The CSV header goes out at once: a stop line in its place would be skipped as the header
// by a loader told there is one (psql's HEADER), which would then load nothing and succeed.
func (p *pipeline) write(out io.Writer) (Report, error) {
	ow := recordOut{w: out, buf: make([]byte, 0, outChunk+outChunk/4)}
	ow.buf = append(ow.buf, p.rr.preamble()...)
	if err := ow.flush(); err != nil {
		return p.abort(err)
	}
	for b := range p.pending {
		select {
		case <-b.done:
		case <-p.ctx.Done():
			return p.abort(p.ctx.Err())
		}
		if b.err != nil {
			return p.abort(fmt.Errorf("decrypt records: %w", b.err))
		}
		if err := p.writeBatch(&ow, b); err != nil {
			return p.abort(err)
		}
	}
	p.wg.Wait()
	if p.readErr != nil {
		return p.rep, p.readErr
	}
	if err := p.ctx.Err(); err != nil {
		return p.rep, err
	}
	if p.rep.Records == 0 && p.opts.Format != FormatCSV {
		return p.rep, ErrNoRecord // what ow holds (blank lines) is never written
	}
	if err := ow.flush(); err != nil {
		return p.rep, err
	}
	return p.rep, nil
}

// abort stops the run on err: the other stages end, and what write holds is dropped.
func (p *pipeline) abort(err error) (Report, error) {
	p.cancel()
	for range p.pending {
	}
	p.wg.Wait()
	return p.rep, err
}

// writeBatch writes b's records to ow, counting them, then releases b.
func (p *pipeline) writeBatch(ow *recordOut, b *recBatch) error {
	for _, rec := range b.recs {
		if err := p.writeRecord(ow, rec); err != nil {
			return err
		}
		if len(ow.buf) >= outChunk {
			if err := ow.flush(); err != nil {
				return err
			}
		}
	}
	b.release()
	if p.opts.Progress != nil {
		p.opts.Progress(p.rep.Records)
	}
	return nil
}

// writeRecord puts rec in ow with its decrypted fields replaced, and reports its failures.
func (p *pipeline) writeRecord(ow *recordOut, rec *record) error {
	if rec.num > 0 {
		p.rep.Records++
	}
	if rec.bad != "" {
		p.rep.Failed++
		if err := report(p.opts, FieldError{rec.num, rec.key, "", CodeInvalidRecord, rec.bad}); err != nil {
			return err
		}
	}
	prev := 0
	for i := range rec.fields {
		f := &rec.fields[i]
		switch {
		case f.repl != nil:
			p.rep.Decrypted++
			ow.buf = append(ow.buf, rec.raw[prev:f.start]...)
			ow.buf = append(ow.buf, f.repl...)
			prev = f.end
		case f.code != "":
			p.rep.Failed++
			if err := report(p.opts, FieldError{rec.num, rec.key, f.name, f.code, f.msg}); err != nil {
				return err
			}
		default:
			p.rep.Empty++
		}
	}
	ow.buf = append(ow.buf, rec.raw[prev:]...)
	return nil
}

// outChunk is the size from which recordOut writes what it holds.
const outChunk = 256 << 10

// recordOut holds whole records until outChunk bytes are there, then writes them in one Write.
type recordOut struct {
	w   io.Writer
	buf []byte
}

func (o *recordOut) flush() error {
	if len(o.buf) == 0 {
		return nil
	}
	_, err := o.w.Write(o.buf)
	o.buf = o.buf[:0]
	if err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

// report hands fe to opts.Errors.
func report(opts Options, fe FieldError) error {
	if opts.Errors == nil {
		return nil
	}
	if err := opts.Errors(fe); err != nil {
		return fmt.Errorf("write errors: %w", err)
	}
	return nil
}
