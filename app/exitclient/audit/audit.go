// Package audit tells, without decrypting anything, which ciphertexts the identities imported
// into the exit server reach (`idvault exit audit`): it reads only what names each
// ciphertext's key, from a tree of files or the fields of records, asks the server
// (exitclient.AuditIDs), and names the holders of the keys out of reach.
package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/exit/encryption"
)

// Options tunes Tree and Records.
type Options struct {
	// Format, Fields and Encoding describe the records when the input is a file (as for
	// records.Decrypt); a directory is read as a tree of ciphertext files.
	Format   string
	Fields   []string
	Encoding string
	// Users name the holders: plain user IDs the app gave createIdentity (a holder whose hashed
	// user ID is one of them is named by it), and "email:ADDRESS" lines, which also name the
	// email provisional identity of ADDRESS (hashed as Tanker hashes it). A phone number's hash
	// is salted with its provisional identity's private signature key: only Identities names it.
	Users []string
	// Identities, when set, are read once (as exit import reads a file, ReadIdentities): the
	// private identities one would import. A holder whose identity is there is named by its
	// line (Holder.Line); a provisional one also by its "email:ADDRESS" or
	// "phone_number:NUMBER" (Holder.User, unless Users names it). Nothing else of an identity
	// is kept. A file that does not read is a *UsageError.
	Identities io.Reader
	// Item receives every item that is not reachable (missing or invalid), in input order. An
	// error it returns stops the audit.
	Item func(Item) error
	// Progress, when set, is called with the items audited so far, from time to time.
	Progress func(items int64)
	// Key, for records, names the column or top-level key whose value each item carries as
	// Key (as records.Options.Key).
	Key string
}

// Item statuses of an audit.
const (
	Reachable = "reachable"
	Missing   = "missing" // a valid header whose key no imported identity reaches
	Invalid   = "invalid" // not a Tanker ciphertext: empty, unknown format, too short
)

// Item is one ciphertext of an audit.
type Item struct {
	// Source is the file's path relative to the input directory (slash-separated), or
	// RECORD:FIELD for records (RECORD counting data records from 1).
	Source string `json:"source"`
	// Key is the value of Options.Key in the item's record (absent when it has none).
	Key    string `json:"key,omitempty"`
	Status string `json:"status"`
	// Format is the ciphertext's first byte (0 when there is none).
	Format int `json:"format"`
	// ResourceID is the standard base64 of the resource ID (16 bytes, or 33 for formats 9 to
	// 11, as the SDKs' getResourceId), empty for an invalid item.
	ResourceID string `json:"resource_id,omitempty"`
	// Holders are, for a missing item, the users and the provisional identities nobody claimed
	// whose private identity would open it (none when no identity of the app holds its key).
	Holders []Holder `json:"holders,omitempty"`
	// Reason says why an invalid item is not a ciphertext.
	Reason string `json:"reason,omitempty"`
}

// Holder is an identity that holds a key: a user, by the standard base64 of the hashed user ID
// (UserID), or a provisional identity nobody claimed, by the value its public identity carries
// (Provisional: "hashed_email:<base64>" or "hashed_phone_number:<base64>"); named by User when
// Options.Users or Identities knows it, and by Line when Identities holds it.
type Holder struct {
	UserID      string `json:"user_id,omitempty"`
	Provisional string `json:"provisional,omitempty"`
	User        string `json:"user,omitempty"`
	Line        int    `json:"line,omitempty"`
}

// Summary counts the items of an audit.
type Summary struct {
	Total     int64 `json:"total"`
	Reachable int64 `json:"reachable"`
	Missing   int64 `json:"missing"`
	Invalid   int64 `json:"invalid"`
}

// UserCount is how many missing items importing one identity (a Holder: a user's or a
// provisional identity's) would open.
type UserCount struct {
	UserID      string `json:"user_id,omitempty"`
	Provisional string `json:"provisional,omitempty"`
	User        string `json:"user,omitempty"`
	Line        int    `json:"line,omitempty"`
	Resources   int64  `json:"resources"`
}

// Report is the outcome of Tree or Records.
type Report struct {
	Summary Summary `json:"summary"`
	// MissingByUser lists the holders of missing items (users and provisional identities),
	// most items first.
	MissingByUser []UserCount `json:"missing_by_user"`
}

// auditEntry is one item waiting for its keys' audit.
type auditEntry struct {
	path   string // a file's, or for records the field's name
	record int    // a record's number (0 for a file)
	key    string // the record's key (Options.Key)
	format int
	rid    encryption.ResourceID
	reason string // invalid when set
}

// keyState is the server's audit of one 16-byte ID: holders are the base64 user IDs, then
// the "hashed_TARGET:<base64>" provisional identities.
type keyState struct {
	reachable bool
	holders   []string
}

// auditBatch is how many items are read before their keys are asked for; auditCacheMax
// bounds the IDs remembered between batches (transparent sessions share a session ID over
// many records).
const (
	auditBatch    = 5000
	auditCacheMax = 200000
	// auditHead is what is read of a file: enough for every format's header; the formats
	// whose resource ID ends the data (1, 2, 3, 6) also have their last 16 bytes read.
	auditHead = 64
)

// Tree reads, through the exit server c, only the headers of the ciphertexts of every regular file under the
// directory dir, in lexical order, asks the server (POST /v1/audit) which of their keys the
// imported identities reach, and reports without decrypting anything: each item that is not
// reachable goes to opts.Item with its holders, and the report counts them and ranks the
// holders. Any other entry (a symlink, a pipe...) is an invalid item, as tree.Decrypt does not
// read it either.
func Tree(ctx context.Context, c *exitclient.Client, dir string, opts Options) (Report, error) {
	a := newAuditor(c, opts)
	return a.finish(ctx, a.tree(ctx, dir))
}

// Records is Tree of the opts.Fields of the records read from in (opts.Format).
func Records(ctx context.Context, c *exitclient.Client, in io.Reader, opts Options) (Report, error) {
	a := newAuditor(c, opts)
	return a.finish(ctx, a.records(ctx, in))
}

func newAuditor(c *exitclient.Client, opts Options) *auditor {
	return &auditor{c: c, opts: opts, cache: map[encryption.SimpleID]keyState{}, byUser: map[string]int64{}}
}

// finish audits what is still pending after the input was read (err, what reading said) and
// ranks the holders.
func (a *auditor) finish(ctx context.Context, err error) (Report, error) {
	if err == nil {
		err = a.flush(ctx)
	}
	if err != nil {
		return Report{Summary: a.sum}, err
	}
	rep := Report{Summary: a.sum, MissingByUser: []UserCount{}}
	for id, n := range a.byUser {
		h := a.holder(id)
		rep.MissingByUser = append(rep.MissingByUser, UserCount{UserID: h.UserID, Provisional: h.Provisional, User: h.User, Line: h.Line, Resources: n})
	}
	sort.Slice(rep.MissingByUser, func(i, j int) bool {
		x, y := rep.MissingByUser[i], rep.MissingByUser[j]
		if x.Resources != y.Resources {
			return x.Resources > y.Resources
		}
		return x.UserID+x.Provisional < y.UserID+y.Provisional
	})
	return rep, nil
}

type auditor struct {
	c       *exitclient.Client
	opts    Options
	pending []auditEntry
	cache   map[encryption.SimpleID]keyState
	names   map[string]holderName // by holder (keyState.holders), once the app ID is known
	byUser  map[string]int64
	sum     Summary
}

// tree audits every entry under dir but its directories, in lexical order.
func (a *auditor) tree(ctx context.Context, dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		e := auditEntry{path: filepath.ToSlash(rel)}
		if !d.Type().IsRegular() {
			e.reason = tree.NotRegularReason(d.Type()) // exit decrypt does not read it either
			return a.add(ctx, e)
		}
		head, err := readHeader(path)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		e.fromHeader(head)
		return a.add(ctx, e)
	})
}

// readHeader reads what identifies a file's key: the whole file when small, otherwise its
// first auditHead bytes followed by its last 16 (where formats 1, 2, 3 and 6 keep it).
func readHeader(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= auditHead+encryption.IDSize {
		return io.ReadAll(f)
	}
	buf := make([]byte, auditHead+encryption.IDSize)
	if _, err := io.ReadFull(f, buf[:auditHead]); err != nil {
		return nil, err
	}
	if _, err := f.ReadAt(buf[auditHead:], st.Size()-encryption.IDSize); err != nil {
		return nil, err
	}
	return buf, nil
}

// fromHeader fills e from what identifies a ciphertext.
func (e *auditEntry) fromHeader(data []byte) {
	if len(data) > 0 {
		e.format = int(data[0])
	}
	_, rid, err := encryption.ExtractResourceID(data)
	switch {
	case len(data) == 0:
		e.reason = "empty"
	case errors.Is(err, encryption.ErrUnknownFormat):
		e.reason = "unknown format " + strconv.Itoa(int(data[0]))
	case err != nil:
		e.reason = "too short for its format's header"
	default:
		e.rid = rid
	}
}

// records audits the fields of a file of records; empty and null fields are not items.
// Reading the records and their headers runs beside the audit of their keys: one batch is
// read while the one before it is audited.
func (a *auditor) records(ctx context.Context, in io.Reader) error {
	rr, err := records.NewReader(a.opts.Format, in, a.opts.Fields, a.opts.Key)
	if err != nil {
		return err
	}
	if _, err := records.DecodeCiphertext(a.opts.Encoding, nil); err != nil {
		return &records.UsageError{Msg: err.Error()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full, free := make(chan []auditEntry, 1), make(chan []auditEntry, 2)
	free <- make([]auditEntry, 0, auditBatch)
	free <- make([]auditEntry, 0, auditBatch)
	var readErr error
	go func() {
		defer close(full)
		readErr = readAuditRecords(ctx, rr, a.opts.Encoding, full, free)
	}()
	var auditErr error
	for batch := range full {
		if auditErr == nil {
			a.pending = batch
			if auditErr = a.flush(ctx); auditErr != nil {
				cancel() // the reader stops; what it sent is drained
			}
		}
		free <- batch[:0]
	}
	a.pending = nil
	if auditErr != nil {
		return auditErr
	}
	return readErr
}

// readAuditRecords reads records into batches of entries (from free, onto full) until the
// input or ctx ends.
func readAuditRecords(ctx context.Context, rr *records.Reader, encoding string, full, free chan []auditEntry) error {
	var headers records.HeaderReader
	var batch []auditEntry
	select {
	case batch = <-free:
	case <-ctx.Done():
		return ctx.Err()
	}
	send := func() error {
		select {
		case full <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case batch = <-free:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			if len(batch) > 0 {
				return send()
			}
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Bad() != "" { // a record that cannot be read is one invalid item (it has no fields)
			batch = append(batch, auditEntry{record: rec.Num(), key: rec.Key(), reason: rec.Bad()})
		}
		for i := range rec.Fields() {
			fl := rec.Field(i)
			e := auditEntry{record: rec.Num(), key: rec.Key(), path: fl.Name()}
			switch {
			case fl.Bad() != "":
				e.reason = fl.Bad()
			case fl.Null():
				continue
			default:
				ct, err := headers.Header(encoding, fl.Text())
				if err != nil {
					e.reason = err.Error()
				} else {
					e.fromHeader(ct)
				}
			}
			batch = append(batch, e)
		}
		if len(batch) >= auditBatch {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

func (a *auditor) add(ctx context.Context, e auditEntry) error {
	a.pending = append(a.pending, e)
	if len(a.pending) >= auditBatch {
		return a.flush(ctx)
	}
	return nil
}

// flush audits the pending items' keys and reports them: the session or resource IDs first,
// then, for formats 9 to 11 whose session is out of reach, their seeds.
func (a *auditor) flush(ctx context.Context) error {
	if len(a.cache) > auditCacheMax {
		clear(a.cache)
	}
	var first, seeds []encryption.SimpleID
	for _, e := range a.pending {
		if e.reason == "" {
			first = a.unknown(first, e.rid.ID)
		}
	}
	if err := a.ask(ctx, first); err != nil {
		return err
	}
	for _, e := range a.pending {
		if e.reason == "" && e.rid.Composite && !a.cache[e.rid.ID].reachable {
			seeds = a.unknown(seeds, e.rid.Seed)
		}
	}
	if err := a.ask(ctx, seeds); err != nil {
		return err
	}
	for _, e := range a.pending {
		if err := a.report(e); err != nil {
			return err
		}
	}
	a.pending = a.pending[:0]
	if a.opts.Progress != nil {
		a.opts.Progress(a.sum.Total)
	}
	return nil
}

// unknown appends id to ids when its state is not known yet (once).
func (a *auditor) unknown(ids []encryption.SimpleID, id encryption.SimpleID) []encryption.SimpleID {
	if _, ok := a.cache[id]; !ok {
		a.cache[id] = keyState{} // placeholder, so that a batch asks once
		ids = append(ids, id)
	}
	return ids
}

// report counts one item and hands it to opts.Item unless it is reachable.
func (a *auditor) report(e auditEntry) error {
	a.sum.Total++
	// The item's source is named only for an item that is reported (most are reachable).
	item := func() Item {
		it := Item{Source: e.path, Key: e.key, Format: e.format}
		if e.record > 0 {
			it.Source = strconv.Itoa(e.record) + ":" + e.path
		}
		return it
	}
	if e.reason != "" {
		a.sum.Invalid++
		it := item()
		it.Status, it.Reason = Invalid, e.reason
		return a.emit(it)
	}
	st := a.cache[e.rid.ID]
	reachable, holders := st.reachable, st.holders
	if e.rid.Composite && !reachable {
		seed := a.cache[e.rid.Seed]
		reachable = seed.reachable
		holders = union(holders, seed.holders)
	}
	if reachable {
		a.sum.Reachable++
		return nil
	}
	a.sum.Missing++
	it := item()
	it.Status, it.ResourceID = Missing, e.rid.String()
	for _, h := range holders {
		a.byUser[h]++
		it.Holders = append(it.Holders, a.holder(h))
	}
	return a.emit(it)
}

func (a *auditor) emit(item Item) error {
	if a.opts.Item == nil {
		return nil
	}
	if err := a.opts.Item(item); err != nil {
		return fmt.Errorf("audit: write the report: %w", err)
	}
	return nil
}
