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
	var (
		mu       sync.Mutex
		sum      = ImportSummary{Total: total}
		done     int
		firstErr error
	)
	parts := func(yield func([]Identity) bool) {
		part := make([]Identity, 0, min(batch, max(total, 1)))
		stopped := false // yield said no more: it may not be called again
		err := read(func(id Identity) bool {
			part = append(part, id)
			if len(part) < batch {
				return true
			}
			if stopped = !yield(part); stopped {
				return false
			}
			part = make([]Identity, 0, batch)
			return true
		})
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			cancel()
			return
		}
		if !stopped && len(part) > 0 {
			yield(part)
		}
	}
	inParallelSeq(ctx, parallel, parts, func(part []Identity) {
		var local ImportSummary
		err := c.importBatch(ctx, part, &local, func(n int) {
			if n == 0 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			done += n
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		})
		mu.Lock()
		defer mu.Unlock()
		sum.Imported += local.Imported
		sum.AlreadyImported += local.AlreadyImported
		sum.Refused = append(sum.Refused, local.Refused...)
		if err != nil && firstErr == nil && (ctx.Err() == nil || parent.Err() == nil) {
			firstErr = err
			cancel()
		}
	})
	sort.Slice(sum.Refused, func(i, j int) bool { return sum.Refused[i].Line < sum.Refused[j].Line })
	if firstErr == nil {
		firstErr = parent.Err() // batches skipped because the caller gave up
	}
	return sum, firstErr
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
