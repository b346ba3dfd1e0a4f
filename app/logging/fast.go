package logging

import (
	"bytes"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// LogBulk logs one bulk line (see Bulk) at level through log's handler, directly: no caller
// lookup (slog.Logger looks up the caller's program counter for every line, even when the
// handler does not print it). A logger made by New writes the line straight into its buffer
// when the fast format can (no slog.Record, no copy); any other goes through its handler.
//
// now is the line's time (the request log passes the time it measured the request's end at,
// rather than reading the clock again).
func LogBulk(log *slog.Logger, now time.Time, level slog.Level, msg string, attrs ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(Bulk, level) {
		return
	}
	if fl, ok := h.(flushing); ok && fl.fast != nil && level < slog.LevelWarn {
		if fl.w.writeLine(fl.fast, now, level, msg, attrs) {
			return
		}
		h = fl.Handler // what the fast format cannot write: slog's handler (bulk: no flush)
	}
	r := slog.NewRecord(now, level, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(Bulk, r)
}

// fastFormat writes the records of the request log, as the slog text or JSON handler would,
// byte for byte, without its general machinery. It takes only what it can write exactly: string
// values of plain characters, integers, and floats that print without an exponent, with no
// group; anything else returns false and goes through slog (FuzzFastFormat compares the two).
type fastFormat struct {
	json bool
	// clock keeps the formatted second of the last line.
	clock clock
}

// plain reports whether s prints unquoted in text and unescaped in JSON.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

var plainByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == ':' || c == '/' || c == '@' || c == '+'
	}
	return t
}()

// recordAttrs puts the attributes of r in attrs; false when they do not fit (more than a
// request line has: slog writes the record).
func recordAttrs(r slog.Record, attrs *[8]slog.Attr) (int, bool) {
	n, more := 0, false
	r.Attrs(func(a slog.Attr) bool {
		if n == len(attrs) {
			more = true
			return false
		}
		attrs[n] = a
		n++
		return true
	})
	return n, !more
}

// appendLine appends the line of a record to b; false (b then holds a partial line) when the
// record needs slog.
func (f *fastFormat) appendLine(b []byte, t time.Time, level slog.Level, msg string, attrs []slog.Attr) ([]byte, bool) {
	if y := t.Year(); t.IsZero() || y < 0 || y >= 10000 || !plain(msg) {
		return b, false
	}
	b = f.appendHeader(b, t, level.String(), msg)
	for _, a := range attrs {
		if !plain(a.Key) {
			return b, false
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
				return b, false
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
			if m, ok := appendMillis(b, v.Float64()); ok {
				b = m
				break
			}
			n := len(b)
			b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
			if bytes.ContainsAny(b[n:], "eIN") { // exponent, Inf, NaN: JSON differs
				return b, false
			}
		default:
			return b, false
		}
	}
	if f.json {
		b = append(b, '}')
	}
	return append(b, '\n'), true
}

// appendHeader appends what starts every line: its time, level and message.
func (f *fastFormat) appendHeader(b []byte, t time.Time, levelName, msg string) []byte {
	if f.json {
		b = append(b, `{"time":"`...)
		b = f.clock.appendTime(b, t, true)
		b = append(b, `","level":"`...)
		b = append(b, levelName...)
		b = append(b, `","msg":"`...)
		b = append(b, msg...)
		return append(b, '"')
	}
	b = append(b, "time="...)
	b = f.clock.appendTime(b, t, false)
	b = append(b, " level="...)
	b = append(b, levelName...)
	b = append(b, " msg="...)
	return append(b, msg...)
}

// appendMillis appends x as strconv.AppendFloat(b, x, 'g', -1, 64) would when x is a whole number
// of thousandths below a million (the request log's duration_ms, microseconds over 1000), from
// integers: the shortest decimal that reads back as x is then that number of thousandths, and
// 'g' writes it without an exponent. False, with b unchanged, for any other x.
func appendMillis(b []byte, x float64) ([]byte, bool) {
	if !(x >= 0 && x < 1e6) || math.Signbit(x) { // -0 prints "-0"
		return b, false
	}
	th := int64(x*1000 + 0.5)
	if float64(th)/1000 != x {
		return b, false
	}
	b = strconv.AppendInt(b, th/1000, 10)
	if frac := th % 1000; frac != 0 {
		d := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 3
		for d[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), d[:n]...)
	}
	return b, true
}

// clock formats times of the current second from its cached date and time up to the second
// and zone, both as slog writes them: the text handler's RFC 3339 with milliseconds, and the
// JSON handler's RFC 3339 with nanoseconds. Formatting a time in full cost as much as the rest
// of the request line.
type clock struct {
	last atomic.Pointer[second]
}

type second struct {
	unix   int64
	loc    *time.Location
	prefix []byte // 2006-01-02T15:04:05
	zone   []byte // Z07:00
}

// appendTime appends t as slog's JSON handler (nanos) or text handler writes it.
func (c *clock) appendTime(b []byte, t time.Time, nanos bool) []byte {
	s := c.last.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		whole := t.Truncate(time.Second)
		s = &second{unix: t.Unix(), loc: t.Location(),
			prefix: whole.AppendFormat(nil, "2006-01-02T15:04:05"), zone: whole.AppendFormat(nil, "Z07:00")}
		c.last.Store(s)
	}
	b = append(b, s.prefix...)
	ns := t.Nanosecond()
	if nanos {
		if ns != 0 { // RFC3339Nano: the fraction without trailing zeros, none when zero
			digits := 9
			for ns%10 == 0 {
				ns /= 10
				digits--
			}
			b = append(b, '.')
			b = appendPadded(b, ns, digits)
		}
	} else {
		b = append(b, '.')
		b = appendPadded(b, ns/int(time.Millisecond), 3)
	}
	return append(b, s.zone...)
}

// appendPadded appends n (>= 0) in decimal on exactly width digits, zero-padded.
func appendPadded(b []byte, n, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:width]...)
}
