package httpguard

import "bytes"

// FramingOf says what makes a request's framing ambiguous, or "" when it is exact, from its raw
// header lines (the request line excluded): two Host headers (fasthttp keeps one of them
// silently), two Content-Length headers, or Content-Length together with Transfer-Encoding
// (RFC 9112 section 6.3: a server may refuse it, and must close the connection after it). A
// proxy in front may have read any of these differently from us, which is how requests are
// smuggled. Both servers make this check: the main server on fasthttp's raw header block
// (app/httpguard/fiberguard), the exit server on the head Heads reads before net/http does.
func FramingOf(raw []byte) string { return scanHeaders(raw).framing() }

// headerFacts is what the framing checks need of a header block, read in one pass.
type headerFacts struct {
	hosts, lengths, encodings int
	length, encoding          []byte // the last Content-Length and Transfer-Encoding values
}

func scanHeaders(raw []byte) headerFacts {
	var f headerFacts
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		name := bytes.TrimSpace(line[:colon])
		switch {
		case bytes.EqualFold(name, []byte("Host")):
			f.hosts++
		case bytes.EqualFold(name, []byte("Content-Length")):
			f.lengths++
			f.length = line[colon+1:]
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			f.encodings++
			f.encoding = line[colon+1:]
		}
	}
	return f
}

// framing is FramingOf's answer.
func (f headerFacts) framing() string {
	switch {
	case f.hosts > 1:
		return "the request has more than one Host header"
	case f.lengths > 0 && f.encodings > 0:
		return "the request has both Content-Length and Transfer-Encoding"
	case f.lengths > 1:
		return "the request has more than one Content-Length header"
	case f.encodings > 1:
		return "the request has more than one Transfer-Encoding header"
	}
	return ""
}
