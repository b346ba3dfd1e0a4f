package exitclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Identity is one private identity to import and where it came from (for reports).
type Identity struct {
	Value string
	// Line is its 1-based line in a JSON-lines file, or its 1-based position in a JSON array.
	Line int
}

// ReadIdentities reads private identities from JSON lines or one JSON array. Each entry is a
// string, or an object holding it under "identity" (the identities.jsonl of gen-dump:
// {"email", "identity"}), "private_identity", or "private_permanent_identity" and
// "private_provisional_identity" (the fake authentication server's answer; both are taken).
// Blank lines are skipped. A bad line is an error naming it.
func ReadIdentities(r io.Reader) ([]Identity, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := firstByte(br)
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if first == '[' {
		var arr []json.RawMessage
		if err := json.NewDecoder(br).Decode(&arr); err != nil {
			return nil, fmt.Errorf("read identities: the JSON array does not parse: %w", err)
		}
		var out []Identity
		for i, raw := range arr {
			vals, err := identitiesOf(raw)
			if err != nil {
				return nil, fmt.Errorf("read identities: entry %d: %w", i+1, err)
			}
			for _, v := range vals {
				out = append(out, Identity{Value: v, Line: i + 1})
			}
		}
		return out, nil
	}
	var out []Identity
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		vals, err := identitiesOf(text)
		if err != nil {
			return nil, fmt.Errorf("read identities: line %d: %w", line, err)
		}
		for _, v := range vals {
			out = append(out, Identity{Value: v, Line: line})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read identities: %w", err)
	}
	return out, nil
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			return b, br.UnreadByte()
		}
	}
}

// identitiesOf reads one entry. Errors never quote the entry (it holds secrets).
func identitiesOf(raw []byte) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return nil, errors.New("empty identity")
		}
		return []string{s}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("not a JSON string or object")
	}
	var out []string
	for _, key := range []string{"identity", "private_identity", "private_permanent_identity", "private_provisional_identity"} {
		v, ok := obj[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, &s); err != nil || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%q is not a non-empty string", key)
		}
		out = append(out, s)
		if key == "identity" || key == "private_identity" {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`no "identity" field`)
	}
	return out, nil
}

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

// Import sends identities in batches. A batch the server refuses because of some entries is
// sent again without them, so good identities are imported and only bad ones are reported.
// Server errors and dropped connections are retried with backoff (importing is idempotent);
// any other error stops the import and is returned with the summary so far.
func (c *Client) Import(parent context.Context, ids []Identity, opts ImportOptions) (ImportSummary, error) {
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
		sum      = ImportSummary{Total: len(ids)}
		done     int
		firstErr error
		wg       sync.WaitGroup
		starts   = make(chan int)
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range starts {
				part := ids[start:min(start+batch, len(ids))]
				var local ImportSummary
				err := c.importBatch(ctx, part, &local)
				mu.Lock()
				sum.Imported += local.Imported
				sum.AlreadyImported += local.AlreadyImported
				sum.Refused = append(sum.Refused, local.Refused...)
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					done += len(part)
					if opts.Progress != nil {
						opts.Progress(done, len(ids))
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for start := 0; start < len(ids); start += batch {
		select {
		case starts <- start:
		case <-ctx.Done():
			break feed
		}
	}
	close(starts)
	wg.Wait()
	sort.Slice(sum.Refused, func(i, j int) bool { return sum.Refused[i].Line < sum.Refused[j].Line })
	if firstErr == nil {
		firstErr = parent.Err() // batches skipped because the caller gave up
	}
	return sum, firstErr
}

func (c *Client) importBatch(ctx context.Context, part []Identity, sum *ImportSummary) error {
	for len(part) > 0 {
		res, err := c.importOnce(ctx, part)
		var api *APIError
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
	resp, err := c.do(ctx, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPut, c.URL+"/v1/identities", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	})
	if err != nil {
		return importResult{}, err
	}
	defer resp.Body.Close()
	var res importResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return importResult{}, fmt.Errorf("import: the server's answer does not parse: %w", err)
	}
	return res, nil
}
