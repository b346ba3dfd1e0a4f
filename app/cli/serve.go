package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "run the HTTP server (fake authentication, identity server, verification API, admin API)",
		help: `The server creates the data file, the master key and the admin token on first start,
in directories that exist: a --data or store.path whose directory is missing is refused with
the command that creates it (only ./data, the default's, is made). Nothing is created when a
listen address is in use or the data file was written by a newer idvault. While it runs, it
writes the address it listens on to the data file's path plus ".addr", so the app and backup
commands find it whatever --listen said; the file is removed on a clean shutdown (SIGINT,
SIGTERM, or SIGHUP unless started under nohup).`,
		setup: func(c *cmdline) runFunc {
			var cf configFlags
			cf.register(c)
			listen := c.String("listen", "", "listen address `ADDR` as host:port (overrides server.listen)")
			level := c.String("log-level", "", "`LEVEL`: debug, info, warn or error (overrides log.level)")
			c.nonEmpty("listen", "log-level")
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("unexpected argument %q", args[0])
				}
				flags := map[string]any{}
				if *listen != "" {
					flags["server.listen"] = *listen
				}
				if *level != "" {
					flags["log.level"] = *level
				}
				l, code, ok := c.p.load(cf, flags)
				if !ok {
					return code
				}
				log, closeLog := newLogger(l.Config.Log, c.p.stderr)
				defer closeLog()
				log.Info("configuration loaded", "profile", l.Profile)
				if err := serve(ctx, c.p, l.Config, log); err != nil {
					log.Error("idvault stopped", "err", err)
					return exitFail
				}
				return exitOK
			}
		},
	}
}

// serve runs the server until ctx is cancelled, then shuts down gracefully: in-flight requests
// finish (up to server.shutdown_timeout), the store is closed cleanly, the address file is
// removed, and a last line says so.
func serve(ctx context.Context, p *prog, c config.Config, log *slog.Logger) (err error) {
	// Nothing is created before the listen addresses are bound and the directories checked
	// (serve_start.go): an address in use or a mistyped --data leaves no new file behind.
	ln, err := listenTCP(c.Server.Listen, "listen on", "give another address with --listen or server.listen")
	if err != nil {
		return err
	}
	defer ln.Close() // after a failed start; closed already by the server's shutdown otherwise
	metricsLn, err := listenMetrics(c.Metrics, log)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		defer metricsLn.Close()
	}
	if err := checkDirectories(c); err != nil {
		return err
	}
	st, mk, err := openServerStore(c, log)
	if err != nil {
		return err
	}
	var addr string
	defer func() {
		if cerr := st.Close(); cerr != nil {
			log.Error("closing the store", "err", cerr)
			err = errors.Join(err, cerr)
		}
		if addr != "" {
			removeAddrFile(c.Store.Path, addr)
		}
		if err == nil {
			log.Info("idvault stopped cleanly", "data", c.Store.Path)
		}
	}()
	adminToken, err := ensureAdminToken(p, c, log)
	if err != nil {
		return err
	}
	c.Server.MaxConnections = fitConnections(log, "server.max_connections", c.Server.MaxConnections)
	srv, cleanup, err := build(ctx, c, log, st, mk, adminToken, p.env.Build)
	if err != nil {
		return err
	}
	defer cleanup()
	defer srv.Close() // first: the readiness checks use the store and the mailer

	stopMetrics := serveMetrics(metricsLn, srv.MetricsListenerHandler(c.Metrics.Listen, c.Metrics.AllowedHosts), log)
	defer stopMetrics()

	addr = ln.Addr().String()
	if werr := writeAddrFile(c.Store.Path, addr); werr != nil {
		log.Warn("could not record the listen address beside the data file; the app and backup commands will use server.listen", "err", werr)
	}
	logListening(log, c, addr)
	return serveUntilDone(ctx, p, srv.Serve, ln, log, c.Server.ShutdownTimeout, srv.App.ShutdownWithTimeout)
}

// openServerStore loads the master key (created, with a warning, on the first start) and opens the
// data file with it.
func openServerStore(c config.Config, log *slog.Logger) (*store.Store, *store.MasterKey, error) {
	mk, created, err := store.LoadOrCreateMasterKey(c.Store.KeyFile, c.Store.Path)
	if err != nil {
		return nil, nil, err
	}
	if created {
		log.Warn("created a new master key: back it up apart from the data file; without it no secret can be read", "key_file", c.Store.KeyFile)
	}
	st, err := openDataFile(store.Options{Path: c.Store.Path, MasterKey: mk, LockTimeout: c.Store.LockTimeout,
		RecordCacheBytes: recordCacheBytes(c.Store.RecordCacheMiB)}, c.Store.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	return st, mk, nil
}

// logListening says where the server listens and what it serves.
func logListening(log *slog.Logger, c config.Config, addr string) {
	log.Info("idvault listening", "addr", addr, "data", c.Store.Path,
		"fakeauth", c.FakeAuth.Enabled, "identity_server", c.IdentityServer.Enabled,
		"identity_server_oidc", c.IdentityServer.Enabled && c.IdentityServer.OIDC.On(), "verification", c.Verification.Enabled,
		"console", c.Console.On(c.Server.Listen))
	if c.Console.On(c.Server.Listen) {
		log.Info("web console: sign in with the admin token", "url", "http://"+addr+"/console/")
	}
}

// ensureAdminToken returns the admin token: admin.token when set, else the one in the token
// file, generated (0600) on first start. A generated token is printed once when stdout is a
// terminal; otherwise (systemd, docker, a pipe) it is only in the file and the log says where,
// so it never lands in a log collector.
func ensureAdminToken(p *prog, c config.Config, log *slog.Logger) (string, error) {
	if c.Admin.Token != "" {
		return c.Admin.Token, nil
	}
	path := adminTokenFile(c)
	if tok, err := readAdminToken(c); err == nil && tok != "" {
		return tok, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	// A new file, never one in place: a failed write leaves no partial token behind.
	if err := writeNew(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("admin token file: %w", err)
	}
	if isTerminal(p.stdout) {
		fmt.Fprintf(p.stdout, "Generated the admin token (shown once; kept in %s, mode 0600):\n  %s\n", path, tok)
	} else {
		log.Warn("generated the admin token; it is not printed (stdout is not a terminal): read it from the token file", "token_file", path)
	}
	return tok, nil
}

// newToken is a new bearer token: 32 random bytes, base64url without padding. The admin token
// (generated on first start or by init) and the identity server's token of app create are
// made by it.
func newToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// recordCacheBytes is store.record_cache_mib as store.Options.RecordCacheBytes (negative: off).
func recordCacheBytes(mib int) int {
	if mib == 0 {
		return -1
	}
	return mib << 20
}
