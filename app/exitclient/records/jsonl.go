package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// jsonlReader reads JSON lines: one object per line, the fields to decrypt being top-level
// keys whose values are strings (null passes through). Every line keeps its exact bytes but
// for the values replaced. A line that is not a JSON object passes through unchanged and is
// reported as invalid_record; a key absent from a line is not an error; blank lines pass
// through and are not counted; a key repeated in one object has every occurrence decrypted; a
// UTF-8 BOM before the first line passes through.
type jsonlReader struct {
	br   *bufio.Reader
	want map[string]bool
	key  string // the key whose value each record carries (none when empty)
	num  int
	line int    // lines read, blank ones included, for messages
	mem  *arena // where lines' bytes come from (nil: one allocation each)
	// started is set once the first line is read (the only one a BOM may start).
	started bool
}

// utf8BOM is the byte order mark some editors put before UTF-8 text.
var utf8BOM = []byte("\xef\xbb\xbf")

func newJSONLReader(r io.Reader, fields []string) *jsonlReader {
	j := &jsonlReader{br: bufio.NewReaderSize(r, 256<<10), want: map[string]bool{}}
	for _, f := range fields {
		j.want[f] = true
	}
	return j
}

func (j *jsonlReader) preamble() []byte { return nil }

// setKey names the top-level key whose value each record carries as its key.
func (j *jsonlReader) setKey(name string) error {
	j.key = name
	return nil
}

// next reads the next record (io.EOF at the end).
func (j *jsonlReader) next() (*record, error) {
	j.line++
	raw, err := j.readLine()
	if err != nil {
		return nil, err
	}
	rec := &record{raw: raw}
	rec.fields = rec.inline[:0]
	body := trimEOL(raw)
	// A UTF-8 BOM before the first line (a Windows editor's "UTF-8") is not part of its JSON:
	// it is written back as it came, and the positions of the fields count it.
	off := 0
	if !j.started && bytes.HasPrefix(body, utf8BOM) {
		off = len(utf8BOM)
	}
	j.started = true
	body = body[off:]
	if len(bytes.TrimSpace(body)) == 0 {
		return rec, nil
	}
	j.num++
	rec.num = j.num
	if !json.Valid(body) {
		rec.bad = "the line is not valid JSON"
		return rec, nil
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		rec.bad = "the line is not a JSON object"
		return rec, nil
	}
	// The line is valid JSON, so the scan can trust its structure.
	j.scanMembers(rec, body, skipSpace(body, i+1), off)
	return rec, nil
}

// readLine reads one line, its line end included (io.EOF at the end of the input). The usual
// line, whole in the reader's buffer, is copied once into the arena; any other goes to
// readLineRest.
func (j *jsonlReader) readLine() ([]byte, error) {
	line, err := j.br.ReadSlice('\n')
	if err == nil && j.mem != nil && len(line) <= maxRecord {
		return j.mem.copy(line), nil
	}
	return j.readLineRest(line, err)
}

// readLineRest reads the line whose first part ReadSlice returned as line with err, when it is
// not the usual one: longer than the reader's buffer, the input's last, cut by a read error, or
// read with no arena (one allocation each).
func (j *jsonlReader) readLineRest(line []byte, err error) ([]byte, error) {
	var raw []byte
	for {
		if len(raw)+len(line) > maxRecord {
			return nil, fmt.Errorf("read records: line %d is over %d MiB", j.line, maxRecord>>20)
		}
		raw = append(raw, line...)
		switch {
		case err == bufio.ErrBufferFull:
			line, err = j.br.ReadSlice('\n')
			continue
		case err == io.EOF && len(raw) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("read records: %w", err)
		}
		return raw, nil
	}
}

// scanMembers reads into rec the members of a JSON object from body[i], its first member or
// its closing brace: the record's key, and the fields to decrypt, at their positions in the
// line (off is where body starts in it). body is valid JSON: its structure is trusted.
func (j *jsonlReader) scanMembers(rec *record, body []byte, i, off int) {
	for body[i] != '}' {
		kend := scanString(body, i)
		key := body[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unescapeJSON(body[i:kend]))
		}
		i = skipSpace(body, kend)
		i = skipSpace(body, i+1) // the colon
		vend := skipValue(body, i)
		if j.key != "" && string(key) == j.key && rec.key == "" {
			rec.key = jsonKeyValue(body[i:vend])
		}
		if j.want[string(key)] {
			rec.fields = append(rec.fields, jsonField(string(key), body, i, vend, off))
		}
		i = skipSpace(body, vend)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
}

// jsonField is the field name whose value is body[i:vend], a string to decrypt, or null, or
// any other value, which is not a ciphertext.
func jsonField(name string, body []byte, i, vend, off int) field {
	f := field{name: name, start: off + i, end: off + vend}
	switch body[i] {
	case '"':
		f.text = body[i+1 : vend-1]
		if bytes.IndexByte(f.text, '\\') >= 0 {
			f.text = []byte(unescapeJSON(body[i:vend]))
		}
		f.null = len(f.text) == 0
	case 'n':
		f.null = true
	default:
		f.bad = "the value is not a JSON string"
	}
	return f
}

// unescapeJSON is the text of the JSON string s (quotes included) with its escapes decoded.
func unescapeJSON(s []byte) string {
	var v string
	_ = json.Unmarshal(s, &v) // the line is valid JSON
	return v
}

// jsonKeyValue is a key's value as FieldError.Key gives it: a string's text, other values
// (numbers, mostly) as written, null as nothing.
func jsonKeyValue(v []byte) string {
	switch v[0] {
	case '"':
		return unescapeJSON(v)
	case 'n':
		return ""
	}
	return string(v)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString returns the index after the string starting at b[i] (a quote).
func scanString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = scanString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return len(b)
}

// quoteJSON appends v (UTF-8) as a JSON string, escaping only what JSON requires (quote,
// backslash, control characters), so that HTML characters stay as they are.
func quoteJSON(dst, v []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for len(v) > 0 {
		c := v[0]
		if c >= utf8.RuneSelf || c >= 0x20 && c != '"' && c != '\\' {
			dst = append(dst, c)
			v = v[1:]
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		v = v[1:]
	}
	return append(dst, '"')
}
