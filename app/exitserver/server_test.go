package exitserver_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/app/jsonkeys"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

const testToken = "s3cret-token-for-tests"

type fixture struct {
	db     *exitfake.DB
	url    string
	client *http.Client
	logs   *apptest.LogBuffer
}

func newFixture(t *testing.T, cfg exitserver.Config) *fixture {
	t.Helper()
	f := &fixture{db: exitfake.New(), logs: &apptest.LogBuffer{}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv := exitserver.New(f.db, cfg)
	// Served as `idvault exit` serves it (Server.Serve: netguard's listener and idle limits);
	// every answer is checked against exit.json.
	addr := apptest.ServeLoopback(t, srv.Serve, func() error { return srv.Shutdown(5 * time.Second) })
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	f.url = "http://" + addr
	f.client = &http.Client{Transport: apptest.CheckTransport(tr, apptest.LoadExitAPIDoc), Timeout: time.Minute}
	return f
}

// do sends a request with the test token (unless auth is "") and returns status, body.
func (f *fixture) do(t *testing.T, method, path, auth string, body io.Reader) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, body)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw, resp.Header
}

func (f *fixture) logText() string { return f.logs.String() }

type errBody struct {
	Error struct {
		Status  int                 `json:"status"`
		Code    string              `json:"code"`
		Message string              `json:"message"`
		TraceID string              `json:"trace_id"`
		Entries []exitdb.EntryError `json:"entries"`
	} `json:"error"`
}

func requireError(t *testing.T, status int, raw []byte, wantStatus int, wantCode string) errBody {
	t.Helper()
	var e errBody
	require.NoError(t, json.Unmarshal(raw, &e), "body: %s", raw)
	require.Equal(t, wantStatus, status, "body: %s", raw)
	require.Equal(t, wantCode, e.Error.Code, "body: %s", raw)
	require.Equal(t, wantStatus, e.Error.Status)
	require.NotEmpty(t, e.Error.TraceID)
	require.NotEmpty(t, e.Error.Message)
	require.True(t, slices.ContainsFunc(apierr.ExitCatalog, func(c apierr.Code) bool {
		return c.Name == wantCode && c.Status == wantStatus
	}), "%s %d is in apierr.ExitCatalog", wantCode, wantStatus)
	return e
}

// The tests' stand-in for the PostgreSQL database.
var _ exitserver.DB = (*exitfake.DB)(nil)

func importBody(ids ...string) io.Reader {
	raw, _ := json.Marshal(map[string][]string{"identities": ids})
	return bytes.NewReader(raw)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	status, raw, _ := f.do(t, "GET", "/healthz", "", nil)
	require.Equal(t, 200, status, "healthz needs no token: %s", raw)

	status, raw, _ = f.do(t, "GET", "/readyz", "", nil)
	requireError(t, status, raw, 401, "unauthorized")
	status, raw, _ = f.do(t, "GET", "/readyz", testToken, nil)
	require.Equal(t, 200, status, "%s", raw)

	f.db.SetDown(true)
	status, raw, hdr := f.do(t, "GET", "/readyz", testToken, nil)
	requireError(t, status, raw, 503, "database_unavailable")
	require.NotEmpty(t, hdr.Get("Retry-After"))
	f.db.SetDown(false)
	status, _, _ = f.do(t, "GET", "/readyz", testToken, nil)
	require.Equal(t, 200, status, "recovers by itself once the database is back")
}

// A request line over the read buffer never reaches a handler, and still gets its catalogue
// code, with a trace ID, as exit.json says.
func TestHeaderTooLargeIsACatalogueError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	// One write, as most clients send such a request: the server answers and closes with part of
	// it unread, and a client still writing (net/http writes headers in 4 KiB pieces) may see the
	// reset before the answer.
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	target := "/readyz?pad=" + strings.Repeat("x", 5000)
	_, err = conn.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: exit\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	e := requireError(t, resp.StatusCode, raw, 431, "request_header_too_large")
	require.Equal(t, resp.Header.Get("X-Request-ID"), e.Error.TraceID)
	doc, err := apptest.LoadExitAPIDoc()
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, f.url+target, nil)
	require.NoError(t, err)
	require.NoError(t, doc.Check(apptest.Exchange{Request: req, Status: resp.StatusCode, Header: resp.Header, Body: raw}))
}

// A client's X-Request-ID is kept when short and safe, and replaced otherwise: it is logged,
// echoed as trace_id and written into a stream's header by hand.
func TestClientRequestID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	for id, kept := range map[string]bool{
		"batch-7:file-12":                  true,
		"evil\"quote":                      false,
		"<script>":                         false,
		strings.Repeat("a", 65):            false,
		"with space":                       false,
		"0b5e3c1e-8a4e-4a57-9d7c-2d0f1f3f": true,
	} {
		req, err := http.NewRequest(http.MethodGet, f.url+"/readyz", nil)
		require.NoError(t, err)
		req.Header.Set("X-Request-ID", id)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		e := requireError(t, resp.StatusCode, raw, 401, "unauthorized")
		got := resp.Header.Get("X-Request-ID")
		require.Equal(t, got, e.Error.TraceID)
		if kept {
			require.Equal(t, id, got)
		} else {
			require.NotEqual(t, id, got)
			require.Regexp(t, `^[0-9a-f-]{36}$`, got, "a new UUID replaces %q", id)
		}
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	for name, auth := range map[string]string{
		"missing": "", "wrong": "not-the-token", "prefix": testToken[:5], "longer": testToken + "x",
	} {
		for _, route := range []struct{ method, path string }{{"PUT", "/v1/identities"}, {"POST", "/v1/decrypt"}, {"GET", "/readyz"}} {
			status, raw, hdr := f.do(t, route.method, route.path, auth, strings.NewReader("{}"))
			requireError(t, status, raw, 401, "unauthorized")
			require.Contains(t, hdr.Get("WWW-Authenticate"), "Bearer", name)
		}
	}
	// The scheme is case-insensitive (RFC 9110 11.1): the right token after "bearer" is let in.
	for _, scheme := range []string{"bearer", "BEARER"} {
		req, err := http.NewRequest("GET", f.url+"/readyz", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", scheme+" "+testToken)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, scheme)
	}
	// Without a configured token, routes are open (loopback use).
	open := newFixture(t, exitserver.Config{})
	status, _, _ := open.do(t, "GET", "/readyz", "", nil)
	require.Equal(t, 200, status)
	require.NotContains(t, f.logs.String(), testToken, "the token never reaches the log")
}

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, token string
		insecure    bool
		ok          bool
	}{
		{"127.0.0.1:8000", "", false, true},
		{"[::1]:8000", "", false, true},
		{"localhost:8000", "", false, true},
		{"localhost.:8000", "", false, true},
		{"LOCALHOST:8000", "", false, true},
		{"0.0.0.0:8000", "", false, false},
		{":8000", "", false, false},
		{"192.168.1.10:8000", "", false, false},
		{"0.0.0.0:8000", "tok", false, true},
		{"0.0.0.0:8000", "", true, true},
		{"nonsense", "tok", false, false},
	} {
		err := exitserver.CheckListen(tc.addr, tc.token, tc.insecure)
		if tc.ok {
			require.NoError(t, err, tc.addr)
		} else {
			require.Error(t, err, tc.addr)
		}
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken, BatchLimit: 3})
	a, _ := f.db.AddUser()
	b, _ := f.db.AddUser()

	status, raw, _ := f.do(t, "PUT", "/v1/identities", testToken, importBody(a))
	require.Equal(t, 201, status, "%s", raw)
	require.JSONEq(t, `{"imported": 1, "already_imported": 0}`, string(raw))

	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, importBody(a, b))
	require.Equal(t, 201, status, "%s", raw)
	require.JSONEq(t, `{"imported": 1, "already_imported": 1}`, string(raw), "re-importing is harmless")

	// All or nothing: one bad entry, nothing stored, each bad entry listed by index.
	c, _ := f.db.AddUser()
	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, importBody("garbage", c, "more garbage"))
	e := requireError(t, status, raw, 400, "invalid_identity")
	require.Equal(t, []exitdb.EntryError{{Index: 0, Reason: "user not in the dump"}, {Index: 2, Reason: "user not in the dump"}}, e.Error.Entries)
	require.False(t, f.db.IsImported(c), "nothing stored from a refused batch")
	require.NotContains(t, string(raw), "garbage", "the answer never echoes identities")

	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, importBody(a, b, c, a))
	e = requireError(t, status, raw, 413, "payload_too_large")
	require.Contains(t, e.Error.Message, "limit is 3")

	for name, body := range map[string]string{
		"not json": "identities=a", "empty": "", "wrong type": `{"identities": "a"}`,
		"numbers": `{"identities": [1]}`, "unknown field": `{"identity": ["a"]}`, "two objects": `{"identities": []}{}`,
		"missing list": `{}`, "a key twice": `{"identities": ["a"], "identities": []}`,
		"a key twice in another case": `{"identities": ["a"], "Identities": []}`,
	} {
		status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, strings.NewReader(body))
		requireError(t, status, raw, 400, "invalid_body")
		require.NotEmpty(t, name)
	}
	// A value of the wrong type is named in the request's terms, never the server's Go types.
	for body, want := range map[string]string{
		`[]`:                  "the body must be a JSON object, not a JSON array",
		`"a"`:                 "the body must be a JSON object, not a JSON string",
		`{"identities": "a"}`: "identities holds a JSON string where an array of strings belongs",
		`{"identities": [1]}`: "identities holds a JSON number where a string belongs",
	} {
		status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, strings.NewReader(body))
		e = requireError(t, status, raw, 400, "invalid_body")
		require.Contains(t, e.Error.Message, want, "body %s", body)
		require.NotContains(t, e.Error.Message, "exitserver.", "body %s", body)
		require.NotContains(t, e.Error.Message, "[]string", "body %s", body)
	}
	// An identity pasted as a key (unknown) is not quoted back; a misspelt field name is.
	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, strings.NewReader(`{"`+c+`": 1}`))
	e = requireError(t, status, raw, 400, "invalid_body")
	require.NotContains(t, string(raw), c[:20], "the answer never echoes identities")
	require.Contains(t, e.Error.Message, "unknown key "+jsonkeys.NotShown)
	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, strings.NewReader(`{"identitys": []}`))
	e = requireError(t, status, raw, 400, "invalid_body")
	require.Contains(t, e.Error.Message, `unknown key "identitys"`)
	huge := `{"identities": ["` + strings.Repeat("A", 64<<10) + `"]}`
	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, strings.NewReader(huge))
	requireError(t, status, raw, 413, "payload_too_large")

	f.db.SetDown(true)
	status, raw, _ = f.do(t, "PUT", "/v1/identities", testToken, importBody(c))
	requireError(t, status, raw, 503, "database_unavailable")
	f.db.SetDown(false)
	require.NotContains(t, f.logs.String(), a[:20], "identities never reach the log")
}

// A compressed body is refused as such (malformed_request naming the encoding), not read as
// compressed bytes: a gzip ciphertext would be an unknown format, a gzip import invalid JSON.
// identity, and any encoding on a request without a body, pass.
func TestContentEncodingRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	a, _ := f.db.AddUser()
	send := func(method, path, encoding string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, f.url+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Encoding", encoding)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, raw
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	importJSON, err := io.ReadAll(importBody(a))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		method, path, encoding string
		body                   []byte
	}{
		"gzip import":   {"PUT", "/v1/identities", "gzip", gz(importJSON)},
		"br import":     {"PUT", "/v1/identities", "identity, br", importJSON},
		"gzip decrypt":  {"POST", "/v1/decrypt", "gzip", gz(randomBytes(200))},
		"deflate batch": {"POST", "/v1/decrypt-batch", "Deflate", randomBytes(50)},
		"gzip audit":    {"POST", "/v1/audit", "gzip", gz([]byte(`{"ids": []}`))},
	} {
		status, raw := send(tc.method, tc.path, tc.encoding, tc.body)
		e := requireError(t, status, raw, 400, "malformed_request")
		require.Contains(t, e.Error.Message, "Content-Encoding", name)
		require.Contains(t, e.Error.Message, "send it uncompressed", name)
	}
	require.False(t, f.db.IsImported(a), "nothing imported from a refused body")

	status, raw := send("PUT", "/v1/identities", "identity", importJSON)
	require.Equal(t, 201, status, "%s", raw)
	status, raw = send("GET", "/readyz", "gzip", nil)
	require.Equal(t, 200, status, "a request without a body passes: %s", raw)
}

// Every format decrypts through the API, at sizes around a chunk boundary.
func TestDecryptEveryFormat(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	who, _ := f.db.AddUser()
	status, raw, _ := f.do(t, "PUT", "/v1/identities", testToken, importBody(who))
	require.Equal(t, 201, status, "%s", raw)
	for v := encryption.V2; v <= encryption.V11; v++ {
		for _, size := range []int{0, 1, 1000, 40 << 10, 200 << 10} {
			clear := randomBytes(size)
			opts := encryption.EncryptOptions{}
			if v.IsStream() {
				opts.ChunkSize = 16 << 10
			}
			enc, err := f.db.Encrypt(who, v, clear, opts)
			require.NoError(t, err)
			status, got, hdr := f.do(t, "POST", "/v1/decrypt", testToken, bytes.NewReader(enc))
			require.Equal(t, 200, status, "%s size %d: %s", v, size, got)
			require.True(t, bytes.Equal(clear, got), "%s size %d: clear text differs", v, size)
			require.Equal(t, "application/octet-stream", hdr.Get("Content-Type"))
		}
	}
}

func TestDecryptErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken, MaxBody: 4096})
	who, _ := f.db.AddUser()
	other, _ := f.db.AddUser()
	status, raw, _ := f.do(t, "PUT", "/v1/identities", testToken, importBody(who))
	require.Equal(t, 201, status, "%s", raw)

	// Format 5 carries its resource ID in front, so tampering or trailing bytes keep the key.
	mine, err := f.db.Encrypt(who, encryption.V5, []byte("hello"), encryption.EncryptOptions{})
	require.NoError(t, err)
	notImported, err := f.db.Encrypt(other, encryption.V3, []byte("hello"), encryption.EncryptOptions{})
	require.NoError(t, err)
	unknown, _, err := encryption.Encrypt(encryption.V3, randomBytes(32), []byte("hello"), encryption.EncryptOptions{})
	require.NoError(t, err)
	tampered := bytes.Clone(mine)
	tampered[len(tampered)-1] ^= 1
	big, err := f.db.Encrypt(who, encryption.V2, randomBytes(8000), encryption.EncryptOptions{})
	require.NoError(t, err)
	bigStream, err := f.db.Encrypt(who, encryption.V4, randomBytes(8000), encryption.EncryptOptions{ChunkSize: 1024})
	require.NoError(t, err)

	cases := []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"tampered", tampered, 422, "decryption_failed"},
		{"unknown version", append([]byte{42}, mine[1:]...), 400, "unsupported_format"},
		{"empty body", nil, 400, "unsupported_format"},
		{"short header", mine[:5], 400, "truncated_data"},
		{"key never published", unknown, 404, "key_not_found"},
		{"creator not imported", notImported, 404, "key_not_found"},
		{"simple format over max body", big, 413, "payload_too_large"},
		{"trailing data", append(bytes.Clone(mine), 0), 422, "decryption_failed"},
	}
	for _, tc := range cases {
		status, raw, _ := f.do(t, "POST", "/v1/decrypt", testToken, bytes.NewReader(tc.body))
		requireError(t, status, raw, tc.status, tc.code)
	}
	// A stream is not bound by max body.
	status, raw, _ = f.do(t, "POST", "/v1/decrypt", testToken, bytes.NewReader(bigStream))
	require.Equal(t, 200, status, "%s", raw)

	f.db.SetDown(true)
	status, raw, _ = f.do(t, "POST", "/v1/decrypt", testToken, bytes.NewReader(mine))
	requireError(t, status, raw, 503, "database_unavailable")
	f.db.SetDown(false)
	status, _, _ = f.do(t, "POST", "/v1/decrypt", testToken, bytes.NewReader(mine))
	require.Equal(t, 200, status, "recovers without a restart")
}

// The key_not_found message names the creator whose identity is missing.
func TestKeyNotFoundNamesCreator(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{})
	other, otherID := f.db.AddUser()
	enc, err := f.db.Encrypt(other, encryption.V5, []byte("hello"), encryption.EncryptOptions{})
	require.NoError(t, err)
	status, raw, _ := f.do(t, "POST", "/v1/decrypt", "", bytes.NewReader(enc))
	e := requireError(t, status, raw, 404, "key_not_found")
	require.Contains(t, e.Error.Message, base64.StdEncoding.EncodeToString(otherID))
	status, _, _ = f.do(t, "PUT", "/v1/identities", "", importBody(other))
	require.Equal(t, 201, status)
	status, got, _ := f.do(t, "POST", "/v1/decrypt", "", bytes.NewReader(enc))
	require.Equal(t, 200, status)
	require.Equal(t, "hello", string(got))
}
