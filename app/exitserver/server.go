package exitserver

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/app/netguard"
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
	// trickling them is answered 400 invalid_body and dropped (httpguard.Heads).
	HeaderTimeout time.Duration
	// BodyIdleTimeout drops a connection whose body, or answer, moves no byte this long
	// (default 60 s), whatever came before. There is no limit on a whole request: a stream of
	// several GiB that keeps moving takes as long as it takes. Answers are under it through
	// the listener of Serve.
	BodyIdleTimeout time.Duration
	// MemoryBudget bounds the bytes request bodies and stream chunk buffers hold at once
	// (default 256 MiB); a request that does not fit within 2 s gets 503 server_busy.
	MemoryBudget int64
	// KeyLookupTimeout bounds the database work of resolving one key (default 30 s); it starts
	// once the ciphertext's header (a stream) or whole body (a simple format) is read.
	KeyLookupTimeout time.Duration
	// Listen and AllowedHosts choose the Host headers answered (httpguard.HostCheck): others get
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
	cfg    Config
	db     DB
	budget *budget
	routes map[string]map[string]route // by path, then method
	list   []route
	http   *http.Server
	// allowHost answers whether a Host header is served (httpguard.HostCheck); nil: all are.
	allowHost func(hostHeader string) bool
	// tokenHash is the SHA-256 of cfg.Token, which authenticate compares a request's with.
	tokenHash [sha256.Size]byte
}

// Serve serves the application on ln behind netguard (accept errors retried, connections
// capped by MaxConns and MaxConnsPerIP, answers under BodyIdleTimeout) and httpguard.Heads
// (request heads checked before net/http reads them).
func (s *Server) Serve(ln net.Listener) error {
	guarded := netguard.Listen(ln, netguard.Config{
		MaxConns: s.cfg.MaxConns, MaxConnsPerIP: s.cfg.MaxConnsPerIP,
		WriteIdle: s.cfg.BodyIdleTimeout, Logger: s.cfg.Logger,
	})
	return s.http.Serve(httpguard.Heads(guarded, httpguard.HeadConfig{Timeout: s.cfg.HeaderTimeout, Refuse: s.refuseHead}))
}

// Shutdown stops accepting connections, closes idle ones and waits, up to timeout in all, for
// requests in flight (decrypt streams included) to finish.
func (s *Server) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.http.Shutdown(ctx)
}

// New builds the application over db.
func New(db DB, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, db: db, budget: newBudget(cfg.MemoryBudget), allowHost: httpguard.HostCheck(cfg.Listen, cfg.AllowedHosts)}
	s.tokenHash = sha256.Sum256([]byte(cfg.Token))
	s.list = s.routeList()
	s.routes = map[string]map[string]route{}
	for _, r := range s.list {
		if s.routes[r.path] == nil {
			s.routes[r.path] = map[string]route{}
		}
		s.routes[r.path][r.method] = r
	}
	s.http = &http.Server{
		Handler: s,
		// From a head's first byte to its end (Heads applies it); a new connection that sends
		// nothing is closed when it runs out.
		ReadHeaderTimeout: cfg.HeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ConnContext:       httpguard.ConnContext,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return s
}

// route is one operation: a handler, public or behind the token.
type route struct {
	method, path string
	handle       func(*exchange) error
	public       bool
}

// routeList is every route, in one list that reads like the API.
func (s *Server) routeList() []route {
	return []route{
		{"GET", "/healthz", s.healthz, true},
		{"GET", "/openapi.json", s.openapi, true}, // public, like idvault serve's document
		{"GET", "/readyz", s.readyz, false},
		{"PUT", "/v1/identities", s.importIdentities, false},
		{"POST", "/v1/decrypt", s.decrypt, false},
		{"POST", "/v1/decrypt-batch", s.decryptBatch, false},
		{"POST", "/v1/audit", s.audit, false},
	}
}

// Routes lists the operations served, as "METHOD /path": HEAD too for each GET route.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.list {
		out = append(out, r.method+" "+r.path)
		if r.method == http.MethodGet {
			out = append(out, http.MethodHead+" "+r.path)
		}
	}
	return out
}
