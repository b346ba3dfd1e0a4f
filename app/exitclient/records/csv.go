package records

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// csvReader reads RFC 4180 CSV with a header row, keeping every record's exact bytes so that
// the columns that are not decrypted come out as they went in (quoting, line ends, spacing).
//
// A record ends at a line end (LF or CRLF) outside quotes, so quoted fields may hold commas,
// quotes ("" inside quotes) and line ends. Choices where RFC 4180 is silent or strict: a bare
// quote inside an unquoted field is kept as a character (the field is not one we decrypt);
// blank lines pass through and are not counted as records (as encoding/csv skips them); a
// record with another number of fields than the header, or with text after a closing quote,
// or a quote left open at the end of the input, passes through unchanged and is reported as
// invalid_record.
type csvReader struct {
	br     *bufio.Reader
	want   map[int]string // column index -> name, for the columns to decrypt
	width  int            // columns of the header
	key    int            // the key column's index, -1 for none
	names  []string       // the header's column names
	num    int
	header []byte
	// mem is where records' bytes come from, for a caller that keeps records (decrypt-records).
	// Without it next returns the same record each time, valid until the next call (the
	// audit, which keeps nothing of a record, reads faster without an allocation per record).
	mem   *arena
	buf   []byte
	rec   record
	spans []csvSpan
	slab  []record // records handed out by newRecord
}

// newRecord returns a zero record, from a slab of them: one allocation per 256 records.
func (c *csvReader) newRecord() *record {
	if len(c.slab) == 0 {
		c.slab = make([]record, 256)
	}
	rec := &c.slab[0]
	c.slab = c.slab[1:]
	return rec
}

// newCSVReader reads the header and finds the columns named by fields (every column of a
// repeated name). A field absent from the header is a usage error.
func newCSVReader(r io.Reader, fields []string) (*csvReader, error) {
	c := &csvReader{br: bufio.NewReaderSize(r, 256<<10), want: map[int]string{}, key: -1}
	raw, err := readCSVRecord(c.br, nil, nil)
	if err == io.EOF {
		return nil, fmt.Errorf("the CSV input is empty, not even a header row: %w", ErrNoRecord)
	}
	if errors.Is(err, errRecordTooLarge) {
		return nil, fmt.Errorf("read records: the header row: %w", err)
	}
	if err != nil {
		return nil, err
	}
	spans, ok := splitCSV(nil, trimEOL(raw))
	if !ok {
		return nil, &UsageError{Msg: "the CSV header row is malformed"}
	}
	body := trimEOL(raw)
	names := map[string]bool{}
	for i, s := range spans {
		name := string(csvValue(body, s))
		if i == 0 {
			name = string(bytes.TrimPrefix([]byte(name), []byte("\xef\xbb\xbf"))) // a UTF-8 BOM
		}
		c.names = append(c.names, name)
		for _, f := range fields {
			if f == name {
				c.want[i] = name
				names[name] = true
			}
		}
	}
	for _, f := range fields {
		if !names[f] {
			return nil, &UsageError{Msg: fmt.Sprintf("no column %q in the CSV header", f)}
		}
	}
	c.width = len(spans)
	c.header = raw
	return c, nil
}

func (c *csvReader) preamble() []byte { return c.header }

// setKey finds the key column (the first of its name) in the header.
func (c *csvReader) setKey(name string) error {
	for i, n := range c.names {
		if n == name {
			c.key = i
			return nil
		}
	}
	return &UsageError{Msg: fmt.Sprintf("no column %q in the CSV header (--key)", name)}
}

// next reads the next record (io.EOF at the end).
func (c *csvReader) next() (*record, error) {
	reuse := c.mem == nil
	var buf []byte
	if reuse {
		buf = c.buf[:0]
	}
	raw, err := readCSVRecord(c.br, buf, c.mem)
	if errors.Is(err, errRecordTooLarge) {
		// Numbered as --errors numbers records (a blank line on the way is not one).
		return nil, fmt.Errorf("read records: record %d: %w", c.num+1, err)
	}
	if err != nil {
		return nil, err
	}
	var rec *record
	if reuse {
		c.buf = raw
		c.rec = record{raw: raw}
		rec = &c.rec
	} else {
		rec = c.newRecord()
		rec.raw = raw
	}
	rec.fields = rec.inline[:0]
	body := trimEOL(raw)
	if len(body) == 0 {
		return rec, nil // a blank line
	}
	c.num++
	rec.num = c.num
	spans, ok := splitCSV(c.spans[:0], body)
	c.spans = spans // nothing keeps a span past this call
	if c.key >= 0 && ok && c.key < len(spans) {
		rec.key = string(csvValue(body, spans[c.key]))
	}
	switch {
	// readCSVRecord ends a record on an even count of quotes, but at the input's end.
	case !ok || !bytes.HasSuffix(raw, []byte{'\n'}) && bytes.Count(raw, []byte{'"'})%2 == 1:
		rec.bad = "the record is not well-formed CSV (text after a closing quote, or a quote left open)"
		return rec, nil
	case len(spans) != c.width:
		rec.bad = fmt.Sprintf("the record has %d fields, the header %d", len(spans), c.width)
		return rec, nil
	}
	for i, s := range spans {
		if name, ok := c.want[i]; ok {
			v := csvValue(body, s)
			rec.fields = append(rec.fields, field{name: name, start: s.start, end: s.end, text: v,
				null: len(v) == 0})
		}
	}
	return rec, nil
}

// maxRecord bounds one record (a quote left open would otherwise read the whole input).
const maxRecord = 64 << 20

// errRecordTooLarge stops reading CSV at a record over maxRecord.
var errRecordTooLarge = fmt.Errorf("over %d MiB (a quote left open?)", maxRecord>>20)

// readCSVRecord reads the bytes of one record, its line end included: lines are joined
// while the quotes seen are odd (a quoted field goes on).
func readCSVRecord(br *bufio.Reader, rec []byte, mem *arena) ([]byte, error) {
	quotes := 0
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if len(rec)+len(line) > maxRecord {
			return nil, errRecordTooLarge
		}
		quotes += bytes.Count(line, []byte{'"'})
		if first && err == nil && quotes%2 == 0 && mem != nil {
			return mem.copy(line), nil // the usual record: one line
		}
		rec = append(rec, line...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(rec) == 0 {
				return nil, io.EOF
			}
			return rec, nil
		case err != nil:
			return nil, fmt.Errorf("read records: %w", err)
		}
		if quotes%2 == 0 {
			return rec, nil
		}
	}
}

// trimEOL drops the record's line end (LF or CRLF).
func trimEOL(raw []byte) []byte {
	if b, ok := bytes.CutSuffix(raw, []byte{'\n'}); ok {
		return bytes.TrimSuffix(b, []byte{'\r'})
	}
	return raw
}

// csvSpan is one field of a record: body[start:end] as written, quotes included.
type csvSpan struct {
	start, end int
	quoted     bool
}

// splitCSV cuts a record (without its line end) into fields. ok is false for text after a
// closing quote or a quote that does not close.
func splitCSV(spans []csvSpan, body []byte) ([]csvSpan, bool) {
	i := 0
	for {
		start := i
		if i < len(body) && body[i] == '"' {
			j := i + 1
			for {
				k := bytes.IndexByte(body[j:], '"')
				if k < 0 {
					return spans, false
				}
				j += k
				if j+1 < len(body) && body[j+1] == '"' {
					j += 2
					continue
				}
				break
			}
			end := j + 1
			if end < len(body) && body[end] != ',' {
				return spans, false
			}
			spans = append(spans, csvSpan{start, end, true})
			i = end
		} else {
			end := len(body)
			if k := bytes.IndexByte(body[i:], ','); k >= 0 {
				end = i + k
			}
			spans = append(spans, csvSpan{start, end, false})
			i = end
		}
		if i == len(body) {
			return spans, true
		}
		i++ // the comma
	}
}

// csvValue is the value of a field: unquoted, with "" turned into ".
func csvValue(body []byte, s csvSpan) []byte {
	v := body[s.start:s.end]
	if !s.quoted {
		return v
	}
	v = v[1 : len(v)-1]
	if bytes.Contains(v, []byte(`""`)) {
		v = bytes.ReplaceAll(v, []byte(`""`), []byte(`"`))
	}
	return v
}

// csvSpecial marks the bytes that make a CSV field need quotes.
var csvSpecial = [256]bool{',': true, '"': true, '\r': true, '\n': true}

// needsCSVQuotes tells whether v holds a comma, a quote or a line end (one table lookup per
// byte: this runs on every clear value decrypt-records writes).
func needsCSVQuotes(v []byte) bool {
	for _, c := range v {
		if csvSpecial[c] {
			return true
		}
	}
	return false
}

// quoteCSV appends v as a CSV field: quoted when it holds a comma, a quote or a line end, and
// when it is empty (PostgreSQL's CSV reads an unquoted empty field as NULL, "" as ”).
func quoteCSV(dst, v []byte) []byte {
	if len(v) > 0 && !needsCSVQuotes(v) {
		return append(dst, v...)
	}
	dst = append(dst, '"')
	for {
		k := bytes.IndexByte(v, '"')
		if k < 0 {
			break
		}
		dst = append(dst, v[:k+1]...)
		dst = append(dst, '"')
		v = v[k+1:]
	}
	dst = append(dst, v...)
	return append(dst, '"')
}
