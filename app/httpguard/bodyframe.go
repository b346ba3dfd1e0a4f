package httpguard

import (
	"bytes"
	"errors"
	"strconv"
)

// bodyFrame follows the end of one request body through the bytes that carry it, as net/http
// reads it: a Content-Length's count, or chunked framing (chunk size lines, data, CRLF, the
// last chunk and its trailer lines), so that Heads knows where the next request's head starts.
type bodyFrame struct {
	chunked bool
	remain  uint64 // bytes left: of the body (Content-Length) or of the chunk's data
	state   chunkState
	line    []byte // a chunk size or trailer line being read
}

type chunkState int

const (
	chunkSize    chunkState = iota // reading a chunk size line
	chunkData                      // remain bytes of chunk data
	chunkCR                        // the CR after the data
	chunkLF                        // the LF after the data
	chunkTrailer                   // trailer lines up to an empty line
	chunkDone
)

// maxChunkLine bounds a chunk size or trailer line, as net/http's chunked reader does.
const maxChunkLine = 4096

var errChunkFraming = errors.New("httpguard: malformed chunked encoding")

// done reports whether the body has ended.
func (b *bodyFrame) done() bool {
	if b.chunked {
		return b.state == chunkDone
	}
	return b.remain == 0
}

// advance takes the bytes of p that belong to the body, from its start, and returns how many
// they are; the body ends within p when done() holds afterwards. A chunked framing net/http
// would not read is an error.
func (b *bodyFrame) advance(p []byte) (int, error) {
	if !b.chunked {
		n := uint64(len(p))
		if n > b.remain {
			n = b.remain
		}
		b.remain -= n
		return int(n), nil
	}
	i := 0
	for i < len(p) && b.state != chunkDone {
		switch b.state {
		case chunkData:
			n := uint64(len(p) - i)
			if n > b.remain {
				n = b.remain
			}
			b.remain -= n
			i += int(n)
			if b.remain == 0 {
				b.state = chunkCR
			}
		case chunkCR, chunkLF:
			want := byte('\r')
			if b.state == chunkLF {
				want = '\n'
			}
			if p[i] != want {
				return i, errChunkFraming
			}
			i++
			b.state++
			if b.state > chunkLF {
				b.state = chunkSize
			}
		default: // a line: chunk size or trailer
			j := bytes.IndexByte(p[i:], '\n')
			end := len(p)
			if j >= 0 {
				end = i + j + 1
			}
			if len(b.line)+end-i > maxChunkLine {
				return i, errChunkFraming
			}
			b.line = append(b.line, p[i:end]...)
			i = end
			if j >= 0 {
				if err := b.endLine(); err != nil {
					return i, err
				}
			}
		}
	}
	return i, nil
}

// endLine acts on a complete chunk size or trailer line.
func (b *bodyFrame) endLine() error {
	line := b.line
	b.line = b.line[:0]
	if b.state == chunkTrailer {
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			b.state = chunkDone
		}
		return nil
	}
	// As net/http: CRLF and no other CR, trailing spaces and tabs, then any extension after ';',
	// then 1 to 16 hexadecimal digits.
	if len(line) < 2 || bytes.IndexByte(line, '\r') != len(line)-2 {
		return errChunkFraming
	}
	line = bytes.TrimRight(line[:len(line)-2], " \t")
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 || len(line) > 16 {
		return errChunkFraming
	}
	n, err := strconv.ParseUint(string(line), 16, 64)
	if err != nil || line[0] == '+' || line[0] == '-' {
		return errChunkFraming
	}
	if n == 0 {
		b.state = chunkTrailer
		return nil
	}
	b.remain, b.state = n, chunkData
	return nil
}

// parseLength reads a Content-Length value as net/http does: decimal digits, spaces around.
func parseLength(v []byte) (uint64, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v), 10, 63)
	return n, err == nil
}
