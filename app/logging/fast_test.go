package logging

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// zone is a fixed zone with an offset, for times not in UTC.
var zone = time.FixedZone("", 5*3600+30*60)

// Whatever the fast path writes is byte for byte what slog's own handler writes, with the
// time formatted in full or from the cached second.
func FuzzFastFormat(f *testing.F) {
	f.Add("request", "route", "/apps/:app_id/public_identities", int64(200), 0.123, int64(1_700_000_000_123_456_789))
	f.Add("request", "ip", "::1", int64(-1), 1e-7, int64(0))
	f.Add("request", "request_id", "a b", int64(5), 12345678.9, int64(42))
	f.Add("msg with space", "k=v", "\"q\"", int64(0), math.Copysign(0, -1), int64(-5))
	f.Fuzz(func(t *testing.T, msg, key, val string, n int64, fl float64, nanos int64) {
		for _, at := range []time.Time{time.Unix(0, nanos).UTC(), time.Unix(0, nanos).In(zone)} {
			for _, json := range []bool{false, true} {
				// A fresh format formats the second, then a second time (the same second,
				// another fraction) takes the cached second.
				f := &fastFormat{json: json}
				for _, t2 := range []time.Time{at, at.Truncate(time.Second).Add(time.Duration(uint64(n) % uint64(time.Second)))} {
					r := slog.NewRecord(t2, slog.LevelInfo, msg, 0)
					r.AddAttrs(slog.String(key, val), slog.Int64("status", n), slog.Float64("duration_ms", fl), slog.String("method", "POST"))
					fast, done := fastLine(f, r)
					if !done {
						continue
					}
					var want bytes.Buffer
					var h slog.Handler = slog.NewTextHandler(&want, nil)
					if json {
						h = slog.NewJSONHandler(&want, nil)
					}
					require.NoError(t, h.Handle(context.Background(), r))
					require.Equal(t, want.String(), string(fast), "json=%v", json)
				}
			}
		}
	})
}

// The request log's own line takes the fast path, in both formats.
func TestRequestLineTakesTheFastPath(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		log, w := New(Options{Format: format}, &out)
		LogBulk(log, time.Now(), slog.LevelInfo, "request", slog.String("method", "POST"), slog.String("route", "/identity"),
			slog.Int("status", 200), slog.Float64("duration_ms", 0.25), slog.String("request_id", "0b6a1c52-3a5c-4d0e"), slog.String("ip", "127.0.0.1"))
		require.NoError(t, w.Close())
		line := out.String()
		require.True(t, strings.HasSuffix(line, "\n"))
		if format == "json" {
			require.Contains(t, line, `"msg":"request","method":"POST","route":"/identity","status":200,"duration_ms":0.25`)
		} else {
			require.Contains(t, line, `msg=request method=POST route=/identity status=200 duration_ms=0.25 request_id=0b6a1c52-3a5c-4d0e ip=127.0.0.1`)
		}
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		r.AddAttrs(slog.String("route", "/identity"))
		_, done := fastLine(&fastFormat{json: format == "json"}, r)
		require.True(t, done, "a plain request line is written by the fast path")
	}
}

// fastLine is the line the fast path writes for r; false when slog writes it.
func fastLine(f *fastFormat, r slog.Record) ([]byte, bool) {
	var attrs [8]slog.Attr
	n, ok := recordAttrs(r, &attrs)
	if !ok {
		return nil, false
	}
	return f.appendLine(nil, r.Time, r.Level, r.Message, attrs[:n])
}

// appendMillis writes what strconv writes, for every whole number of thousandths it takes, and
// declines every other float.
func TestAppendMillisIsStrconv(t *testing.T) {
	t.Parallel()
	check := func(x float64) {
		got, ok := appendMillis([]byte("x="), x)
		if !ok {
			require.Equal(t, "x=", string(got))
			return
		}
		require.Equal(t, string(strconv.AppendFloat([]byte("x="), x, 'g', -1, 64)), string(got), "%v", x)
	}
	for us := range int64(300_000) { // every duration up to 300 ms
		check(float64(us) / 1000)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300_000 {
		check(float64(rng.Int64N(1_000_000_000)) / 1000) // up to the bound
		check(rng.Float64() * 2e6)                       // not thousandths, or past the bound
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 999_999.999, 1e6, 1e6 + 1, 0.0005, -0.001, math.NaN(), math.Inf(1), 1e-7} {
		check(x)
	}
	_, ok := appendMillis(nil, 0.0005)
	require.False(t, ok)
	_, ok = appendMillis(nil, 12.345)
	require.True(t, ok)
}
