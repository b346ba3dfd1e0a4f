// Package apptest holds test helpers shared by the HTTP packages: a real store in a temporary
// directory, apps, an in-memory fiber application built like the real one, and requests.
package apptest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/store"
)

// Env is a real store, app registry and directory in t.TempDir().
type Env struct {
	Store     *store.Store
	MasterKey *store.MasterKey
	Apps      *apps.Registry
	Dir       *directory.Directory
	Log       *slog.Logger
	Prom      *prometheus.Registry
	LogBuf    *LogBuffer
	// created numbers the apps CreateApp makes: app names are unique.
	created atomic.Int64
}

// New opens a fresh store; it is closed when the test ends. Logs go to Env.LogBuf (tests can
// assert that nothing secret was logged).
func New(t testing.TB, declared ...config.DeclaredApp) *Env {
	t.Helper()
	raw := make([]byte, store.MasterKeySize)
	_, _ = rand.Read(raw)
	mk, err := store.NewMasterKey(raw)
	require.NoError(t, err)
	st, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "idvault.db"), MasterKey: mk})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	reg, err := apps.NewRegistry(st, declared)
	require.NoError(t, err)
	buf := &LogBuffer{}
	dir := directory.New(st)
	reg.AfterDelete(dir.Forget)
	t.Cleanup(dir.Close)
	return &Env{
		Store: st, MasterKey: mk, Apps: reg, Dir: dir,
		Log: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), LogBuf: buf,
		Prom: server.NewRegistry(),
	}
}

// CreateApp creates an app and returns it with its auth token.
func (e *Env) CreateApp(t testing.TB, test bool) apps.Created {
	t.Helper()
	c, err := e.Apps.Create(e.NextAppName("test app"), test, store.AppOptions{})
	require.NoError(t, err)
	return c
}

// NextAppName is prefix with a number this Env has not given yet (app names are unique).
func (e *Env) NextAppName(prefix string) string {
	return fmt.Sprintf("%s %d", prefix, e.created.Add(1))
}

// ServerConfig is the server section used by Server.
func ServerConfig() config.Server {
	c := config.Default().Server
	c.ReadTimeout, c.WriteTimeout = 30*time.Second, 30*time.Second
	// In-memory requests (httptest.NewRequest) carry "Host: example.com".
	c.AllowedHosts = []string{"example.com", "localhost", "127.0.0.1"}
	return c
}

// Server builds the real HTTP application with deps filled by fill (Logger, Registry and
// Server are preset).
func (e *Env) Server(fill func(d *server.Deps)) *fiber.App {
	d := server.Deps{Server: ServerConfig(), Logger: e.Log, Registry: e.Prom, Checks: map[string]server.Checker{}}
	if fill != nil {
		fill(&d)
	}
	return server.New(d).App
}

// Response is a decoded answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends one request to app in memory and checks the exchange against the OpenAPI document. body may be nil, a string/[]byte (sent as is), or
// any other value (sent as JSON). Extra headers come as name, value pairs.
func Do(t testing.TB, app *fiber.App, method, target string, body any, headers ...string) Response {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		raw, err = json.Marshal(b)
		require.NoError(t, err)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	CheckAgainstDoc(t, Exchange{Request: req, RequestBody: raw, Status: resp.StatusCode, Header: resp.Header, Body: got})
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: got}
}

// CheckAgainstDoc fails the test (without stopping it) when an exchange does not match the
// OpenAPI document; see openapi.go.
func CheckAgainstDoc(t testing.TB, x Exchange) {
	t.Helper()
	d, err := LoadAPIDoc()
	require.NoError(t, err)
	if err := d.Check(x); err != nil {
		t.Error(err)
	}
}

// ErrorCode returns error.code of a Tanker-style error body ("" if absent).
func (r Response) ErrorCode(t testing.TB) string {
	t.Helper()
	var b struct {
		Error struct {
			Code    string `json:"code"`
			Status  int    `json:"status"`
			TraceID string `json:"trace_id"`
		} `json:"error"`
	}
	r.JSON(t, &b)
	require.Equal(t, r.Status, b.Error.Status, "status in body matches the HTTP status: %s", r.Body)
	require.NotEmpty(t, b.Error.TraceID, "trace_id present: %s", r.Body)
	require.Equal(t, r.Header.Get("X-Request-ID"), b.Error.TraceID)
	require.Contains(t, r.Header.Get("Content-Type"), "application/json")
	return b.Error.Code
}
