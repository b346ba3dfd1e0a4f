package exitclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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
