package exitserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/app/openapi"
	"github.com/idvault/idvault/app/requestid"
	"github.com/idvault/idvault/exit/exitdb"
)

// errStreamCut ends a handler whose answer started and cannot end well: the connection is
// dropped without the answer's end, so that no client takes a cut answer for a whole one.
var errStreamCut = errors.New("exitserver: answer cut")

// ServeHTTP runs a request through the checks every route shares (request ID, Host header,
// Content-Encoding, route, token), its handler and the rendering of its error, and logs it
// (route pattern, status, duration, request ID; never a body or a header value).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var start time.Time // read only when the request is logged (at info, or warn for a 5xx)
	if s.cfg.Logger.Enabled(r.Context(), slog.LevelWarn) {
		start = time.Now()
	}
	x := &exchange{w: w, r: r, rc: *http.NewResponseController(w), idle: s.cfg.BodyIdleTimeout,
		id: requestid.Pick(r.Header.Get("X-Request-ID")), route: "unmatched"}
	x.idv[0] = x.id
	w.Header()["X-Request-Id"] = x.idv[:]
	err := s.run(x)
	if err != nil && !errors.Is(err, errStreamCut) {
		if x.status != 0 { // the answer started and could not be written whole (the client went away)
			s.cfg.Logger.Info("answer cut", "request_id", x.id, "route", x.route, "err", err)
			err = errStreamCut
		} else {
			s.renderError(x, err)
		}
	}
	level := slog.LevelInfo
	if x.status >= 500 {
		level = slog.LevelWarn
	}
	if s.cfg.Logger.Enabled(r.Context(), level) {
		s.cfg.Logger.Log(r.Context(), level, "request", "method", r.Method, "route", x.route,
			"status", x.status, "duration_ms", float64(time.Since(start).Microseconds())/1000, "request_id", x.id)
	}
	if errors.Is(err, errStreamCut) {
		panic(http.ErrAbortHandler) // net/http drops the connection without ending the answer
	}
}

// run is the chain of a request up to its handler, turning a panic into internal_error.
func (s *Server) run(x *exchange) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.cfg.Logger.Error("panic", "request_id", x.id, "route", x.route,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if s.allowHost != nil && !s.allowHost(x.r.Host) {
		return apierr.ExitHostNotAllowed.New()
	}
	if err := refuseContentEncoding(x.r); err != nil {
		return err
	}
	rt, err := s.match(x.r)
	if err != nil {
		return err
	}
	x.route = rt.path
	if !rt.public {
		if err := s.authenticate(x); err != nil {
			return err
		}
	}
	return rt.handle(x)
}

// match finds a request's route: paths in any case, with or without a trailing slash.
func (s *Server) match(r *http.Request) (route, error) {
	path := strings.ToLower(r.URL.Path)
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	methods, ok := s.routes[path]
	if !ok {
		return route{}, apierr.NotFound.New()
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	rt, ok := methods[method]
	if !ok {
		return route{}, apierr.MethodNotAllowed.New()
	}
	return rt, nil
}

// renderError answers err as {"error": {"status", "code", "message", "trace_id"}}. Errors that
// are not *apierr.Error become internal_error; their text only reaches the log.
func (s *Server) renderError(x *exchange, err error) {
	e := apierr.As(err)
	if e == nil {
		e = apierr.Internal(err)
	}
	if e.Code.Status >= 500 {
		s.cfg.Logger.Error("request failed", "request_id", x.id, "route", x.route, "code", e.Code.Name, "err", e.Error())
	}
	x.discardBody()
	switch {
	case e.RetryAfter > 0:
		x.w.Header().Set("Retry-After", apierr.RetryAfterSeconds(e.RetryAfter))
	case e.Code == apierr.DatabaseUnavailable:
		x.w.Header().Set("Retry-After", "1")
	}
	_ = x.json(e.Code.Status, apierr.Body(e, apierr.StyleTanker, x.id))
}

// refuseHead answers a request head httpguard.Heads refused before net/http read it, as the
// catalogue says, with a request ID of its own.
func (s *Server) refuseHead(w io.Writer, p httpguard.HeadProblem) {
	var e *apierr.Error
	switch p.Kind {
	case httpguard.HeadTooLarge:
		e = apierr.HeaderTooLarge.New()
	case httpguard.HeadTimeout:
		e = apierr.InvalidBody.Msg("the request line and headers did not arrive within exit.header_timeout")
	default:
		e = apierr.MalformedRequest.Msg("%s", p.Reason)
	}
	id := requestid.Pick("")
	body, _ := json.Marshal(apierr.Body(e, apierr.StyleTanker, id))
	resp := &http.Response{
		StatusCode: e.Code.Status, ProtoMajor: 1, ProtoMinor: 1, Close: true,
		Header:        http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {id}},
		ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body)),
	}
	_ = resp.Write(w)
	s.cfg.Logger.Info("request", "route", "unmatched", "status", e.Code.Status, "request_id", id, "code", e.Code.Name)
}

func (s *Server) healthz(x *exchange) error {
	return x.json(http.StatusOK, map[string]any{"status": "ok"})
}

// openapi serves the OpenAPI document of these routes.
func (s *Server) openapi(x *exchange) error {
	x.w.Header().Set("Cache-Control", "no-cache")
	return x.send(http.StatusOK, jsonType, openapi.ExitJSON)
}

// readyz answers 200 when the database answers and 503 (database_unavailable) otherwise.
func (s *Server) readyz(x *exchange) error {
	if err := s.db.Ping(x.r.Context()); err != nil {
		return classifyDBError(err)
	}
	return x.json(http.StatusOK, map[string]any{"status": "ready", "checks": map[string]any{"database": "ok"}})
}

// classifyDBError maps a database error: unavailable is 503, anything else internal_error.
func classifyDBError(err error) error {
	if errors.Is(err, exitdb.ErrUnavailable) {
		return apierr.DatabaseUnavailable.Wrap(err)
	}
	return apierr.Internal(err)
}
