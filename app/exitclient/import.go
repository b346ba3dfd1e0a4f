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
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/idvault/idvault/app/jsonkeys"
)

// Identity is one private identity to import and where it came from (for reports).
type Identity struct {
	Value string
	// Line is its 1-based line in a JSON-lines file, or its 1-based position in a JSON array.
	Line int
}

// MaxLineBytes is the longest line ReadIdentities takes in a lines file (a private identity is
// about 400 bytes; the fake authentication server's answer with both identities under 2 KiB).
const MaxLineBytes = 64 << 10

// ReadIdentities reads private identities from lines, or from one JSON array. A line is a bare
// private identity (the base64 string Tanker's createIdentity returns), a JSON string, or a JSON
// object holding it under "identity" (the identities.jsonl of gen-dump: {"email", "identity"}),
// "private_identity", or "private_permanent_identity" and "private_provisional_identity" (the
// fake authentication server's answer; both are taken); kinds may be mixed. Blank lines are
// skipped. Every bad line, and every line over MaxLineBytes, is an error naming it ("line N:
// ..."; all of them, up to ten); errors never quote an entry, since entries are secrets.
func ReadIdentities(r io.Reader) ([]Identity, error) {
	return readIdentities(r, MaxLineBytes)
}

// ScanIdentities reads identities as ReadIdentities does, but hands each to yield in order
// instead of keeping them, and returns how many it read: a file of any size is checked (yield
// doing nothing), then read again to be sent (ImportSeq), with memory bounded by a batch, not
// by the file. yield returning false stops the read (count so far, no error). On an error, yield
// may already have had the entries before the bad line.
func ScanIdentities(r io.Reader, yield func(Identity) bool) (int, error) {
	return scanIdentities(r, MaxLineBytes, yield)
}

func readIdentities(r io.Reader, maxLine int) ([]Identity, error) {
	var out []Identity
	if _, err := scanIdentities(r, maxLine, func(id Identity) bool {
		out = append(out, id)
		return true
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func scanIdentities(r io.Reader, maxLine int, yield func(Identity) bool) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, skipped, err := firstByte(br)
	if err == io.EOF {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read identities: %w", err)
	}
	if first == '[' {
		return scanArray(br, yield)
	}
	var (
		n    int
		errs []error
		bad  int
		buf  []byte
	)
	for line := 1 + skipped; ; line++ {
		var over bool
		var rerr error
		buf, over, rerr = readLine(br, buf[:0], maxLine)
		if rerr != nil && rerr != io.EOF {
			return n, fmt.Errorf("read identities: line %d: %w", line, rerr)
		}
		text := bytes.TrimSpace(buf)
		var lineErr error
		switch {
		case over:
			lineErr = fmt.Errorf("line %d: longer than %d bytes, the most one entry may take", line, maxLine)
		case len(text) > 0:
			vals, err := identitiesOf(text)
			if err != nil {
				lineErr = fmt.Errorf("line %d: %w", line, err)
			}
			for _, v := range vals {
				// Once a line is bad nothing is sent, so the rest are only checked.
				if bad == 0 && !yield(Identity{Value: v, Line: line}) {
					return n, nil
				}
				n++
			}
		}
		if lineErr != nil {
			if bad++; bad <= 10 {
				errs = append(errs, lineErr)
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if bad > 10 {
		errs = append(errs, fmt.Errorf("and %d more bad lines", bad-10))
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("read identities: %w", errors.Join(errs...))
	}
	return n, nil
}

// readLine appends the next line of br to buf, without its line ending, keeping at most
// max+1 bytes of it: over reports a longer line (read to its end, not kept). err is io.EOF at
// the end of the input.
func readLine(br *bufio.Reader, buf []byte, max int) (_ []byte, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > max+2 { // room for "\r\n"
				over = true
				buf = buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		if n := len(buf); n > 0 && buf[n-1] == '\r' {
			buf = buf[:n-1]
		}
		if len(buf) > max {
			over = true
		}
		if over {
			buf = buf[:0]
		}
		return buf, over, err
	}
}

// scanArray reads one JSON array of entries, one entry at a time.
func scanArray(br *bufio.Reader, yield func(Identity) bool) (int, error) {
	dec := json.NewDecoder(br)
	notParsed := func(err error) error {
		return fmt.Errorf("read identities: the JSON array does not parse: %w", err)
	}
	if _, err := dec.Token(); err != nil { // the '[' firstByte saw
		return 0, notParsed(err)
	}
	n := 0
	for i := 1; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return n, notParsed(err)
		}
		vals, err := identitiesOf(raw)
		if err != nil {
			return n, fmt.Errorf("read identities: entry %d: %w", i, err)
		}
		for _, v := range vals {
			if !yield(Identity{Value: v, Line: i}) {
				return n, nil
			}
			n++
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return n, notParsed(err)
	}
	// Anything after the array (a second array, a line appended) would be silently left out.
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return n, errors.New("read identities: something follows the JSON array: give one array, or one entry per line")
	}
	return n, nil
}

// firstByte skips a UTF-8 BOM (a Windows editor's "UTF-8") and the white space before the
// first entry, and returns that entry's first byte, left unread, with the number of lines it
// skipped (so that line numbers stay the file's).
func firstByte(br *bufio.Reader) (byte, int, error) {
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		_, _ = br.Discard(3)
	}
	lines := 0
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, lines, err
		}
		if b == '\n' {
			lines++
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			return b, lines, br.UnreadByte()
		}
	}
}

// identitiesOf reads one entry. Errors never quote the entry (it holds secrets).
func identitiesOf(raw []byte) ([]string, error) {
	if len(raw) > 0 && raw[0] != '"' && raw[0] != '{' && raw[0] != '[' {
		if err := checkBare(raw); err != nil {
			return nil, err
		}
		return []string{string(raw)}, nil
	}
	// encoding/json turns each byte that is not UTF-8 into U+FFFD (three bytes): an entry of
	// another encoding would pass mangled, and longer than its line.
	if !utf8.Valid(raw) {
		return nil, errors.New("not UTF-8 text")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return nil, errors.New("empty identity")
		}
		return []string{s}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("not a JSON string or object, nor a bare base64 identity")
	}
	// encoding/json keeps the last of a key given twice: the first identity would be lost.
	keys := []string{"identity", "private_identity", "private_permanent_identity", "private_provisional_identity"}
	if key, twice := jsonkeys.Repeated(raw, false); twice {
		if !slices.Contains(keys, key) {
			key = "" // an unknown key is not quoted: it may be anything, a secret too
		}
		return nil, fmt.Errorf("the key %q is given twice", key)
	}
	// Every identity key present is taken (an entry holding two is two identities), once.
	var out []string
	for _, key := range keys {
		v, ok := obj[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, &s); err != nil || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%q is not a non-empty string", key)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`no "identity" field`)
	}
	return out, nil
}

// checkBare accepts a bare private identity: one token of base64 characters (standard or URL
// alphabet, padded or not), as Tanker's identity libraries return it. The server judges the
// content, and a refusal names the line.
func checkBare(raw []byte) error {
	for _, b := range raw {
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '-' || b == '_' || b == '=') {
			return errors.New("not a JSON string or object, nor a bare base64 identity (a character outside base64)")
		}
	}
	return nil
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
