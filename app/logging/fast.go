package logging

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LogBulk logs one bulk line (see Bulk) at level through log's handler, directly: no caller
// lookup (slog.Logger looks up the caller's program counter for every line, even when the
// handler does not print it). The logger's handler writes it through its fast path when it can.
func LogBulk(log *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(Bulk, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(Bulk, r)
}

// fastFormat writes the records of the request log, as the slog text or JSON handler would,
// byte for byte, without its general machinery. It takes only what it can write exactly: string
// values of plain characters, integers, and floats that print without an exponent, with no
// group; anything else returns false and goes through slog (FuzzFastFormat compares the two).
type fastFormat struct {
	json bool
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// plain reports whether s prints unquoted in text and unescaped in JSON.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == ':' || c == '/' || c == '@' || c == '+') {
			return false
		}
	}
	return true
}

// write formats r into a pooled buffer and hands it to out; false when r needs slog.
func (f fastFormat) write(r slog.Record, out func([]byte) error) (bool, error) {
	if y := r.Time.Year(); r.Time.IsZero() || y < 0 || y >= 10000 || !plain(r.Message) {
		return false, nil
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b := (*bp)[:0]
	level := r.Level.String()
	if f.json {
		b = append(b, `{"time":"`...)
		b = r.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, level...)
		b = append(b, `","msg":"`...)
		b = append(b, r.Message...)
		b = append(b, '"')
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, r.Time)
		b = append(b, " level="...)
		b = append(b, level...)
		b = append(b, " msg="...)
		b = append(b, r.Message...)
	}
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		if !plain(a.Key) {
			ok = false
			return false
		}
		if f.json {
			b = append(b, `,"`...)
			b = append(b, a.Key...)
			b = append(b, `":`...)
		} else {
			b = append(b, ' ')
			b = append(b, a.Key...)
			b = append(b, '=')
		}
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindString:
			s := v.String()
			if !plain(s) {
				ok = false
				return false
			}
			if f.json {
				b = append(append(append(b, '"'), s...), '"')
			} else {
				b = append(b, s...)
			}
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindFloat64:
			n := len(b)
			b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
			if strings.ContainsAny(string(b[n:]), "eIN") { // exponent, Inf, NaN: JSON differs
				ok = false
				return false
			}
		default:
			ok = false
			return false
		}
		return true
	})
	if !ok {
		return false, nil
	}
	if f.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	*bp = b
	return true, out(b)
}

// appendRFC3339Millis is the time format of slog's text handler: RFC 3339 with exactly three
// fractional digits.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the fourth digit
}
