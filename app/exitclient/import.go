package exitclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
)

// ImportOptions tunes Import.
type ImportOptions struct {
	// Batch is the number of identities per request (default 500).
	Batch int
	// Parallel is the number of batches in flight at once (default 2: the server works on one
	// while the next is on the wire).
	Parallel int
	// Progress, when set, is called after each batch with the identities handled so far; one
	// call at a time.
	Progress func(done, total int)
}

// ImportSummary is the outcome of Import.
type ImportSummary struct {
	Total           int
	Imported        int
	AlreadyImported int
	// Refused lists every identity the server refused, by its place in the input.
	Refused []Refused
}

// Refused is one identity the server would not import.
type Refused struct {
	Line   int
	Reason string
}

// Import probes the server (Probe), then sends identities in batches. A batch the server
// refuses because of some entries is sent again without them, so good identities are imported
// and only bad ones are reported; a batch refused as too large (413, over exit.batch_limit or
// the body limit) is split in halves and each sent again, down to single identities (a single
// identity still too large is reported as refused). Server errors, dropped connections and
// answers cut midway are retried with backoff under the client's retry budget (importing is
// idempotent: a batch stored before its answer was cut counts as already imported); any other
// error (the budget tripping, a refused token, ctx ending) stops the import and is returned with
// the summary so far.
func (c *Client) Import(parent context.Context, ids []Identity, opts ImportOptions) (ImportSummary, error) {
	return c.ImportSeq(parent, len(ids), func(yield func(Identity) bool) error {
		for _, id := range ids {
			if !yield(id) {
				break
			}
		}
		return nil
	}, opts)
}

// ImportSeq is Import over total identities that read hands to its yield one at a time, batch
// by batch as they are sent, so that memory holds Parallel+1 batches, not the identities of a
// whole file (`exit import` checks the file with ScanIdentities, then reads it again here). An
// error read returns stops the import and is returned with the summary so far.
func (c *Client) ImportSeq(parent context.Context, total int, read func(yield func(Identity) bool) error, opts ImportOptions) (ImportSummary, error) {
	if err := c.Probe(parent); err != nil {
		return ImportSummary{Total: total}, err
	}
	batch := max(opts.Batch, 0)
	if batch == 0 {
		batch = 500
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 2
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r := &importRun{sum: ImportSummary{Total: total}, cancel: cancel, progress: opts.Progress}
	inParallelSeq(ctx, parallel, r.parts(read, batch, total), func(part []Identity) {
		var local ImportSummary
		err := c.importBatch(ctx, part, &local, r.advance)
		// A batch cut short because the caller gave up is not the run's error.
		r.add(local, err, ctx.Err() == nil || parent.Err() == nil)
	})
	sort.Slice(r.sum.Refused, func(i, j int) bool { return r.sum.Refused[i].Line < r.sum.Refused[j].Line })
	if r.firstErr == nil {
		r.firstErr = parent.Err() // batches skipped because the caller gave up
	}
	return r.sum, r.firstErr
}

// importRun is one ImportSeq's summary, progress and first error, shared by the batches sent
// at once.
type importRun struct {
	mu       sync.Mutex
	sum      ImportSummary
	done     int
	firstErr error
	cancel   context.CancelFunc // ends the run, on its first error
	progress func(done, total int)
}

// parts cuts what read hands out into batches of size, for inParallelSeq; an error of read
// ends the run with that error.
func (r *importRun) parts(read func(yield func(Identity) bool) error, size, total int) func(yield func([]Identity) bool) {
	return func(yield func([]Identity) bool) {
		part := make([]Identity, 0, min(size, max(total, 1)))
		stopped := false // yield said no more: it may not be called again
		err := read(func(id Identity) bool {
			part = append(part, id)
			if len(part) < size {
				return true
			}
			if stopped = !yield(part); stopped {
				return false
			}
			part = make([]Identity, 0, size)
			return true
		})
		if err != nil {
			r.mu.Lock()
			r.fail(err)
			r.mu.Unlock()
			return
		}
		if !stopped && len(part) > 0 {
			yield(part)
		}
	}
}

// advance counts n more identities done and reports the progress.
func (r *importRun) advance(n int) {
	if n == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	if r.progress != nil {
		r.progress(r.done, r.sum.Total)
	}
}

// add counts a batch's summary, and its error as the run's when it is the first and counts.
func (r *importRun) add(local ImportSummary, err error, counts bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Imported += local.Imported
	r.sum.AlreadyImported += local.AlreadyImported
	r.sum.Refused = append(r.sum.Refused, local.Refused...)
	if err != nil && counts {
		r.fail(err)
	}
}

// fail makes err the run's error, unless it has one already, and ends the run. r.mu is held.
func (r *importRun) fail(err error) {
	if r.firstErr == nil {
		r.firstErr = err
		r.cancel()
	}
}

// importBatch imports part: entries the server refuses are reported and the rest sent again,
// a batch refused as too large is split in halves. progress gets the count of each part done.
func (c *Client) importBatch(ctx context.Context, part []Identity, sum *ImportSummary, progress func(int)) error {
	handled := 0
	defer func() { progress(handled) }()
	for len(part) > 0 {
		res, err := c.importOnce(ctx, part)
		var api *APIError
		if errors.As(err, &api) && api.Status == http.StatusRequestEntityTooLarge {
			if len(part) == 1 {
				sum.Refused = append(sum.Refused, Refused{Line: part[0].Line, Reason: "too large for the server (" + api.Code + ")"})
				handled++
				return nil
			}
			half := len(part) / 2
			progress(handled)
			handled = 0
			if err := c.importBatch(ctx, part[:half], sum, progress); err != nil {
				return err
			}
			return c.importBatch(ctx, part[half:], sum, progress)
		}
		if errors.As(err, &api) && api.Code == "invalid_identity" && len(api.Entries) > 0 {
			bad := map[int]string{}
			for _, e := range api.Entries {
				if e.Index >= 0 && e.Index < len(part) {
					bad[e.Index] = e.Reason
				}
			}
			if len(bad) == 0 {
				return err
			}
			var keep []Identity
			for i, id := range part {
				if reason, ok := bad[i]; ok {
					sum.Refused = append(sum.Refused, Refused{Line: id.Line, Reason: reason})
					handled++
					continue
				}
				keep = append(keep, id)
			}
			part = keep
			continue
		}
		if err != nil {
			return err
		}
		sum.Imported += res.Imported
		sum.AlreadyImported += res.AlreadyImported
		handled += len(part)
		return nil
	}
	return nil
}

type importResult struct {
	Imported        int `json:"imported"`
	AlreadyImported int `json:"already_imported"`
}

func (c *Client) importOnce(ctx context.Context, part []Identity) (importResult, error) {
	vals := make([]string, len(part))
	for i, id := range part {
		vals[i] = id.Value
	}
	body, err := json.Marshal(map[string][]string{"identities": vals})
	if err != nil {
		return importResult{}, err
	}
	// An answer cut midway (the server killed while it answered) is sent again: the batch may
	// have been stored, and importing it twice counts it as already imported.
	raw, err := c.sendRead(ctx, http.MethodPut, "/v1/identities", "application/json", body, 1<<16)
	if err != nil {
		return importResult{}, err
	}
	var res importResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return importResult{}, fmt.Errorf("import: the server's answer does not parse: %w", err)
	}
	return res, nil
}
