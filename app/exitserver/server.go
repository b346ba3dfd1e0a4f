package exitserver

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"idvault/app/openapi"
	"idvault/app/requestid"
)

// Defaults of Config.
const (
	DefaultBatchLimit = 1000
	DefaultMaxBody    = 64 << 20
	DefaultIdle       = 60 * time.Second
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
	// IdleTimeout closes keep-alive connections idle this long (default 60 s). There is no read
	// or write timeout on a whole request: a stream of several GiB takes as long as it takes.
	IdleTimeout time.Duration
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
	App     *fiber.App
}

// Shutdown stops accepting connections and waits, up to timeout in all, for requests in
// flight and for decrypt streams being written to finish.
func (s *Server) Shutdown(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
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
	s := &Server{cfg: cfg, db: db}
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
		IdleTimeout:                  cfg.IdleTimeout,
		ErrorHandler:                 handleErr,
	})
	s.App.Use(requestid.Middleware())
	s.App.Use(s.observe(handleErr))
	s.App.Use(s.recoverMiddleware())
	s.routes()
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
