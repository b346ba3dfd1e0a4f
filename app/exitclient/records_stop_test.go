package exitclient_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/records"
)

// downAfter puts a proxy in front of the server c talks to that passes the first n batches,
// then answers every request 503 (the server gone), and returns a client of the proxy whose
// retry budget is short.
func downAfter(t *testing.T, c *exitclient.Client, n int32) *exitclient.Client {
	t.Helper()
	target, err := url.Parse(c.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/decrypt-batch" && calls.Add(1) > n {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error": {"status": 503, "code": "database_unavailable", "message": "down", "trace_id": "t"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	down := exitclient.New(srv.URL, c.Token)
	down.Backoff = 5 * time.Millisecond
	down.Budget = exitclient.NewRetryBudget(200 * time.Millisecond)
	return down
}

// A run whose server goes away midway has written only whole records, in several writes (the
// output passed its buffer's size many times); the stop line after them holds no clear byte,
// and a CSV or JSON-lines reader fails on it, not on a record.
func TestDecryptRecordsStopsOnARecordBoundary(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	const clear = "a clear value of some length, with a comma, and a \"quote\" in it......"
	ct := f.b64(t, clear)
	const n = 12000 // 12 batches of 1000
	for _, format := range []string{records.FormatCSV, records.FormatJSONL} {
		var in, want strings.Builder
		var recs []string
		if format == records.FormatCSV {
			in.WriteString("id,v,w\n")
			want.WriteString("id,v,w\n")
		}
		for i := range n {
			if format == records.FormatCSV {
				fmt.Fprintf(&in, "%d,%s,x\n", i, ct)
				recs = append(recs, fmt.Sprintf("%d,\"%s\",x\n", i, strings.ReplaceAll(clear, `"`, `""`)))
			} else {
				fmt.Fprintf(&in, "{\"id\":%d,\"v\":%q}\n", i, ct)
				v, _ := json.Marshal(clear)
				recs = append(recs, fmt.Sprintf("{\"id\":%d,\"v\":%s}\n", i, v))
			}
		}
		c := downAfter(t, f.c, 7)
		var out bytes.Buffer
		sw := records.NewStopWriter(&writeCounter{w: &out}, format)
		rep, err := records.Decrypt(context.Background(), c, strings.NewReader(in.String()), sw, records.Options{Format: format, Fields: []string{"v"}, Jobs: 2})
		require.Error(t, err, format)
		require.Less(t, rep.Records, int64(n))
		got := out.String()
		// What was written is the header and the first records, each whole.
		require.True(t, strings.HasPrefix(got, want.String()), format)
		rest := strings.TrimPrefix(got, want.String())
		k := 0
		for k < len(recs) && strings.HasPrefix(rest, recs[k]) {
			rest = rest[len(recs[k]):]
			k++
		}
		require.Empty(t, rest, "%s: the output ends on a record boundary", format)
		require.Greater(t, k, 2000, "%s: records were written before the stop, in several writes", format)

		require.NoError(t, sw.Stop("interrupted"))
		stopped := out.String()
		last := stopped[strings.LastIndexByte(stopped[:len(stopped)-1], '\n')+1:]
		require.Equal(t, string(records.StopLine("interrupted")), last)
		require.NotContains(t, last, "clear value")
		if format == records.FormatCSV {
			r := csv.NewReader(strings.NewReader(stopped))
			read := 0
			for {
				_, err = r.Read()
				if err != nil {
					break
				}
				read++
			}
			require.NotErrorIs(t, err, io.EOF, "a CSV reader fails on the stop line")
			require.Equal(t, 1+k, read, "every record before the stop line reads")
		} else {
			var v any
			require.Error(t, json.Unmarshal([]byte(last), &v), "the stop line is not JSON")
		}
	}
}

// writeCounter passes writes through; it stands for a pipe (no ReadFrom shortcut).
type writeCounter struct {
	w      io.Writer
	writes int
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.writes++
	return c.w.Write(p)
}

// The stop line starts a line of its own after a record without a line end, and goes on inside
// a CSV quoted field left open (its own quote would close it): either way a CSV reader fails at
// the end, and what came before is unchanged.
func TestStopWriterAfterAnUnfinishedRecord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ format, before, stop string }{
		{records.FormatCSV, "a,b\n1,2", "\n" + string(records.StopLine("x"))},
		{records.FormatCSV, "a,b\n1,\"open\nquote", string(records.StopLine("x"))[1:]},
		{records.FormatCSV, "", "idvault exit decrypt-records: STOPPED before any record (this line stands for the header)\n" + string(records.StopLine("x"))},
		{records.FormatJSONL, "", string(records.StopLine("x"))},
		{records.FormatJSONL, `{"a":1}`, "\n" + string(records.StopLine("x"))},
		{records.FormatJSONL, `{"a":"open"}` + "\n", string(records.StopLine("x"))},
	} {
		var out bytes.Buffer
		sw := records.NewStopWriter(&out, tc.format)
		_, err := sw.Write([]byte(tc.before))
		require.NoError(t, err)
		require.NoError(t, sw.Stop("x"))
		require.Equal(t, tc.before+tc.stop, out.String())
		if tc.format == records.FormatCSV {
			_, err = csv.NewReader(&out).ReadAll()
			require.Error(t, err, "%q", tc.before)
		}
	}
	require.True(t, strings.HasPrefix(string(records.StopLine("a\"\r\nb\\c")), `"idvault exit decrypt-records: STOPPED (a   b c) \0`),
		"quotes, line ends and backslashes are dropped from the reason")
}
