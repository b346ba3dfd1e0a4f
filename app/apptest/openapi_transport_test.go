package apptest_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// checkedClient is a client whose exchanges with a stand-in for the exit server are checked
// against exit.json.
func checkedClient(t *testing.T, h http.HandlerFunc) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return srv.URL, &http.Client{Transport: apptest.CheckTransport(tr, apptest.LoadExitAPIDoc), Timeout: 30 * time.Second}
}

// An answer the document does not allow fails the request that got it, naming the route.
func TestCheckTransportRejectsUndocumentedAnswers(t *testing.T) {
	t.Parallel()
	url, client := checkedClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz": // a status exit.json does not list for /readyz
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, `{"error": {"status": 418, "code": "internal_error", "message": "m", "trace_id": "t"}}`)
		case "/v1/decrypt": // clear bytes under a media type the document does not give them
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(bytes.Repeat([]byte("x"), 4<<20))
		}
	})
	_, err := client.Get(url + "/readyz")
	require.ErrorContains(t, err, "exit.json: GET /readyz (route /readyz) answered 418: status is not supported")
	_, err = client.Post(url+"/v1/decrypt", "application/octet-stream", bytes.NewReader([]byte{11, 0}))
	require.ErrorContains(t, err, "exit.json: POST /v1/decrypt (route /v1/decrypt) answered 200")
	require.ErrorContains(t, err, "text/plain")
}

// A binary answer is checked at its headers and then streams through untouched: the client reads
// its start while the server still waits to send the rest, and a stream cut midway reaches the
// client as a read error.
func TestCheckTransportStreamsBinaryAnswers(t *testing.T) {
	t.Parallel()
	read := make(chan struct{})
	url, client := checkedClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(bytes.Repeat([]byte("a"), 1000))
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-time.After(20 * time.Second):
			return
		}
		if r.URL.Query().Has("cut") {
			panic(http.ErrAbortHandler) // drops the connection without the final chunk
		}
		_, _ = w.Write(bytes.Repeat([]byte("b"), 1000))
	})
	post := func(query string) (*http.Response, error) {
		return client.Post(url+"/v1/decrypt"+query, "application/octet-stream", bytes.NewReader([]byte{11, 0, 1}))
	}
	resp, err := post("")
	require.NoError(t, err)
	head := make([]byte, 1000)
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err, "the start of the answer arrives before its end was sent")
	read <- struct{}{}
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, bytes.Repeat([]byte("b"), 1000), rest)

	resp, err = post("?cut")
	require.NoError(t, err, "the headers keep to the document")
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err)
	read <- struct{}{}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "a cut stream stays a failure for the client")
}

// onlyReader hides a reader's type, as a pipe or a file would: the transport streams it.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A request the server accepted is checked against the document whether its body was in memory
// or streamed: an import with a misspelt field that a server wrongly accepted fails.
func TestCheckTransportChecksAcceptedRequests(t *testing.T) {
	t.Parallel()
	url, client := checkedClient(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"imported": 1, "already_imported": 0}`)
	})
	put := func(body io.Reader) error {
		req, err := http.NewRequest(http.MethodPut, url+"/v1/identities", body)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	const good, bad = `{"identities": ["aWRlbnRpdHk="]}`, `{"identity": ["aWRlbnRpdHk="]}`
	require.NoError(t, put(bytes.NewReader([]byte(good))))
	require.NoError(t, put(onlyReader{bytes.NewReader([]byte(good))}))
	for name, body := range map[string]io.Reader{"in memory": bytes.NewReader([]byte(bad)), "streamed": onlyReader{bytes.NewReader([]byte(bad))}} {
		require.ErrorContains(t, put(body), "the server accepted a request the document calls invalid", name)
	}
}
