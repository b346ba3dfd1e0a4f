package exitserver

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/app/netguard"
	"github.com/idvault/idvault/app/openapi"
	"github.com/idvault/idvault/app/requestid"
)

// Defaults of Config.
const (
	DefaultBatchLimit    = 1000
	DefaultMaxBody       = 64 << 20
	DefaultIdle          = 60 * time.Second
	DefaultHeaderTimeout = 30 * time.Second
	DefaultBodyIdle      = 60 * time.Second
	DefaultMemoryBudget  = 256 << 20
)

// Config tunes the server. Zero values take the defaults.
type Config struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on every route but /healthz
	// and /openapi.json.
	Token string
	// BatchLimit is the most identities one PUT /v1/identities may carry (default 1000).
	BatchLimit int
	// MaxBody is the largest simple-format (non-stream) ciphertext POST /v1/decrypt accepts
	// (default 64 MiB). Stream formats have no size limit: they never sit in memory.
	MaxBody int64
	// MaxChunkSize bounds the chunk size a stream header may declare (default: the library's,
	// 16 MiB); the server holds one chunk of it per stream.
	MaxChunkSize int
	// IdleTimeout closes keep-alive connections idle this long (default 60 s).
	IdleTimeout time.Duration
	// HeaderTimeout bounds the request line and headers, in total (default 30 s): a client
	// trickling them is answered 408 and dropped.
	HeaderTimeout time.Duration
	// BodyIdleTimeout drops a connection whose body, or answer, moves no byte this long
	// (default 60 s; the first 8 KiB of the body, read with the headers, must come within it).
	// There is no limit on a whole request: a stream of several GiB that keeps moving takes as
	// long as it takes. It needs the listener of Serve.
	BodyIdleTimeout time.Duration
	// MemoryBudget bounds the bytes request bodies and stream chunk buffers hold at once
	// (default 256 MiB); a request that does not fit within 2 s gets 503 server_busy.
	MemoryBudget int64
	// KeyLookupTimeout bounds the database work of resolving one key (default 30 s); it starts
	// once the ciphertext's header (a stream) or whole body (a simple format) is read.
	KeyLookupTimeout time.Duration
	// Listen and AllowedHosts choose the Host headers answered (httpguard.Hosts): others get
	// 421 host_not_allowed.
	Listen       string
	AllowedHosts []string
	// MaxConns and MaxConnsPerIP cap the open connections of Serve (netguard defaults).
	MaxConns, MaxConnsPerIP int
	// Logger receives the request log; never identities, tokens or clear text.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.BatchLimit <= 0 {
		c.BatchLimit = DefaultBatchLimit
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdle
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.BodyIdleTimeout <= 0 {
		c.BodyIdleTimeout = DefaultBodyIdle
	}
	if c.KeyLookupTimeout <= 0 {
		c.KeyLookupTimeout = keyLookupTimeout
	}
	if c.MemoryBudget <= 0 {
		c.MemoryBudget = DefaultMemoryBudget
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Server is the exit tool's HTTP application.
type Server struct {
	cfg     Config
	db      DB
	streams sync.WaitGroup // decrypt answers being written on hijacked connections
	kept    keptConns      // connections handed back after a stream, waiting for a request
	budget  *budget
	App     *fiber.App
}

// Serve serves the application on ln behind netguard: accept errors retried, connections
// capped (MaxConns, MaxConnsPerIP), and request bodies and answers under BodyIdleTimeout.
func (s *Server) Serve(ln net.Listener) error {
	return s.App.Listener(netguard.Listen(ln, netguard.Config{
		MaxConns: s.cfg.MaxConns, MaxConnsPerIP: s.cfg.MaxConnsPerIP,
		WriteIdle: s.cfg.BodyIdleTimeout, Logger: s.cfg.Logger,
	}))
}

// Shutdown stops accepting connections and waits, up to timeout in all, for requests in
// flight and for decrypt streams being written to finish.
func (s *Server) Shutdown(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	s.kept.closeAll()
	err := s.App.ShutdownWithTimeout(timeout)
	done := make(chan struct{})
	go func() {
		s.streams.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		if err == nil {
			err = errors.New("shutdown: decrypt streams still running at the timeout")
		}
	}
	return err
}

// New builds the fiber application over db.
func New(db DB, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, db: db, budget: newBudget(cfg.MemoryBudget)}
	handleErr := s.errorHandler
	s.App = fiber.New(fiber.Config{
		AppName:               "idvault exit",
		DisableStartupMessage: true,
		Immutable:             true,
		// The request body is handed over as a stream once its first 8 KiB arrived: decrypt
		// reads it chunk by chunk, import reads it up to its own limit.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    1 << 20,
		// ReadTimeout is set from the start of a request (its first byte on a keep-alive
		// connection) to the end of its headers; the body is then under BodyIdleTimeout.
		ReadTimeout:  cfg.HeaderTimeout,
		IdleTimeout:  cfg.IdleTimeout,
		ErrorHandler: handleErr,
	})
	srv := s.App.Server()
	// The first 8 KiB of the body, which fasthttp reads before the handler, get BodyIdleTimeout.
	srv.HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{ReadTimeout: cfg.BodyIdleTimeout}
	}
	// A stream's connection is kept for the next request (keepalive.go): the server hands it
	// back, and closes it when it is done.
	srv.KeepHijackedConns = true
	srv.ConnState = func(c net.Conn, st fasthttp.ConnState) {
		s.trackKept(c, st)
		if st == fasthttp.StateIdle || st == fasthttp.StateClosed {
			netguard.EndBody(c) // the answer is written: the next request's deadlines are fasthttp's
		}
	}
	s.App.Use(requestid.Middleware())
	s.App.Use(s.observe(handleErr))
	s.App.Use(s.recoverMiddleware())
	s.App.Use(func(c *fiber.Ctx) error {
		netguard.StartBody(c.Context().Conn(), cfg.BodyIdleTimeout)
		return c.Next()
	})
	s.App.Use(httpguard.Hosts(cfg.Listen, cfg.AllowedHosts, func() error {
		return apierr.ExitHostNotAllowed.New()
	}))
	s.App.Use(refuseContentEncoding)
	s.routes()
	httpguard.RefuseBadFraming(s.App, handleErr, func(reason string) error { return apierr.MalformedRequest.Msg("%s", reason) })
	return s
}

// routes registers every route, in one list that reads like the API.
func (s *Server) routes() {
	app := s.App
	app.Get("/healthz", s.healthz)
	app.Get("/openapi.json", openapi.ServeExit) // public, like idvault serve's document
	auth := s.authenticate
	app.Get("/readyz", auth, s.readyz)
	app.Put("/v1/identities", auth, s.importIdentities)
	app.Post("/v1/decrypt", auth, s.decrypt)
	app.Post("/v1/decrypt-batch", auth, s.decryptBatch)
	app.Post("/v1/audit", auth, s.audit)
}
