package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/idvault/idvault/app/loopback"
)

// Exit is the exit tool (`idvault exit`): a separate server over a PostgreSQL database restored
// from an exit dump. It runs only when started explicitly; its keys are read by that command.
type Exit struct {
	// Listen is the exit server's address (host:port).
	Listen string `koanf:"listen"`
	// DB is the PostgreSQL connection string (DSN or postgres:// URL) of the restored dump.
	DB string `koanf:"db"`
	// AppID is the base64 app ID whose rows are used (a dump may hold several apps).
	AppID string `koanf:"app_id"`
	// Token, when set, is required as a bearer token on every route but /healthz and /openapi.json.
	Token string `koanf:"token"`
	// Insecure allows a non-loopback Listen without a token.
	Insecure bool `koanf:"insecure"`
	// BatchLimit is the most identities one import request may carry.
	BatchLimit int `koanf:"batch_limit"`
	// MaxBody is the largest simple-format ciphertext accepted, as a size ("64MiB", "1048576").
	MaxBody string `koanf:"max_body"`
	// KeyCache is how many resolved resource keys are kept in memory (bounded LRU).
	KeyCache int `koanf:"key_cache"`
	// ShutdownTimeout is how long in-flight requests get on SIGINT/SIGTERM.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	// AllowedHosts are the Host header names the exit server answers, as server.allowed_hosts
	// (empty: on a loopback listen address only loopback names; elsewhere any host).
	AllowedHosts []string `koanf:"allowed_hosts"`
	// MaxConnections and MaxConnectionsPerIP cap the open connections, in all and per client
	// address; more are answered 503 and closed.
	MaxConnections      int `koanf:"max_connections"`
	MaxConnectionsPerIP int `koanf:"max_connections_per_ip"`
	// HeaderTimeout bounds the request line and headers of a request, in total (from the
	// connection or the request's first byte).
	HeaderTimeout time.Duration `koanf:"header_timeout"`
	// BodyIdleTimeout drops a connection whose request body (or answer) moves no byte for this
	// long; a body that keeps moving is never cut.
	BodyIdleTimeout time.Duration `koanf:"body_idle_timeout"`
	// IdleTimeout closes a keep-alive connection that sends no new request for this long.
	IdleTimeout time.Duration `koanf:"idle_timeout"`
	// MemoryBudget bounds the memory held at once by request bodies and stream chunk buffers
	// ("256MiB"); a request that does not fit waits up to 2 s, then gets 503 server_busy.
	MemoryBudget string `koanf:"memory_budget"`
}

// DefaultExit holds the built-in exit settings.
func DefaultExit() Exit {
	return Exit{
		Listen: "127.0.0.1:8000", BatchLimit: 1000, MaxBody: "64MiB", KeyCache: 100_000,
		ShutdownTimeout: 15 * time.Second, AllowedHosts: []string{},
		MaxConnections: 512, MaxConnectionsPerIP: 128,
		HeaderTimeout: 30 * time.Second, BodyIdleTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second,
		MemoryBudget: "256MiB",
	}
}

func (e Exit) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	host, _, err := net.SplitHostPort(e.Listen)
	if err != nil {
		bad("exit.listen", "want host:port, got %q", e.Listen)
	} else if !loopback.IsHost(host) && e.Token == "" && !e.Insecure {
		bad("exit.listen", "%s is reachable from other machines and exit.token is empty: set a token, listen on 127.0.0.1, or set exit.insecure", e.Listen)
	}
	if e.AppID != "" {
		if id, err := decodeB64(e.AppID); err != nil || len(id) != 32 {
			bad("exit.app_id", "must be the base64 of a 32-byte app ID")
		}
	}
	if e.Token != "" {
		if err := CheckBearerToken(e.Token); err != nil {
			bad("exit.token", "%v", err)
		}
	}
	if e.BatchLimit < 1 || e.BatchLimit > 100_000 {
		bad("exit.batch_limit", "must be between 1 and 100000")
	}
	if n, err := ParseSize(e.MaxBody); err != nil || n < 1024 {
		bad("exit.max_body", "want a size of at least 1KiB such as 64MiB, got %q", e.MaxBody)
	}
	if e.KeyCache < 0 {
		bad("exit.key_cache", "must not be negative")
	}
	errs = append(errs, checkHosts("exit.allowed_hosts", e.AllowedHosts)...)
	errs = append(errs, checkConns("exit", e.MaxConnections, e.MaxConnectionsPerIP)...)
	errs = append(errs, checkBounds([]bounded{
		{"exit.header_timeout", e.HeaderTimeout, time.Millisecond, maxTimeout},
		{"exit.body_idle_timeout", e.BodyIdleTimeout, time.Millisecond, maxTimeout},
		{"exit.idle_timeout", e.IdleTimeout, time.Millisecond, maxTimeout},
		{"exit.shutdown_timeout", e.ShutdownTimeout, time.Millisecond, maxTimeout},
	})...)
	maxBody := e.MaxBodyBytes()
	if n, err := ParseSize(e.MemoryBudget); err != nil {
		bad("exit.memory_budget", "want a size such as 256MiB, got %q", e.MemoryBudget)
	} else if need := max(3*maxBody, MinExitMemoryBudget); n < need {
		bad("exit.memory_budget", "must be at least %d bytes: three times exit.max_body (a simple-format body sent chunked, and its clear text) and three 16 MiB stream chunks", need)
	}
	return errs
}

// MinExitMemoryBudget is the least exit.memory_budget: the three buffers of one stream whose
// chunks have the largest size accepted (16 MiB).
const MinExitMemoryBudget = 3 * 16 << 20

// MemoryBudgetBytes is MemoryBudget in bytes (after Validate).
func (e Exit) MemoryBudgetBytes() int64 {
	n, _ := ParseSize(e.MemoryBudget)
	return n
}

// MaxBodyBytes is MaxBody in bytes (after Validate).
func (e Exit) MaxBodyBytes() int64 {
	n, _ := ParseSize(e.MaxBody)
	return n
}

// ParseSize reads a byte size: a number with an optional unit, B, KB/MB/GB (powers of 1000)
// or KiB/MiB/GiB (powers of 1024), case-insensitive ("64MiB", "1gb", "1048576").
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
		{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (KiB, MiB, GiB, KB, MB, GB)", s)
	}
	return n * mult, nil
}

// ErrFor is Err restricted to the problems of the given sections ("exit", "log"): a command
// that reads only those sections (idvault exit) does not fail on a problem of another.
func (l *Loaded) ErrFor(sections ...string) error {
	var errs []error
	for _, e := range append(append([]error{}, l.Problems...), l.Config.Validate()...) {
		msg := e.Error()
		for _, s := range sections {
			if strings.HasPrefix(msg, s+".") || strings.HasPrefix(msg, s+":") {
				errs = append(errs, e)
				break
			}
		}
	}
	return errors.Join(errs...)
}
