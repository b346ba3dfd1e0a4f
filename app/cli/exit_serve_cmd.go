package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
)

// exitServerSetup declares the exit server's flags; the server runs with them.
func exitServerSetup(c *cmdline) runFunc {
	var cf configFlags
	c.StringVar(&cf.file, "config", "", "configuration `FILE` (YAML): replaces the embedded local-dev profile, over the built-in defaults")
	listen := c.String("listen", "", "listen address `ADDR` as host:port (exit.listen; default 127.0.0.1:8000)")
	db := c.String("db", "", "PostgreSQL connection string `DSN` of the restored dump (exit.db; prefer IDVAULT_EXIT__DB)")
	appID := c.String("app-id", "", "base64 app `ID` whose data is decrypted (exit.app_id)")
	token := c.String("token", "", "bearer token `T` required on every route but /healthz and /openapi.json (exit.token; prefer IDVAULT_EXIT__TOKEN)")
	insecure := c.Bool("insecure", false, "allow a non-loopback --listen without a token (exit.insecure)")
	batch := c.Int("batch-limit", 0, "most identities in one import request (exit.batch_limit; default 1000)")
	maxBody := c.String("max-body", "", "largest simple-format ciphertext, a `SIZE` such as 64MiB (exit.max_body; default 64MiB)")
	keyCache := c.Int("key-cache", 0, "resolved keys kept in memory (exit.key_cache; default 100000)")
	level := c.String("log-level", "", "`LEVEL`: debug, info, warn or error (log.level)")
	// "" would be taken for the flag left out: the config's or IDVAULT_EXIT__*'s value instead.
	c.nonEmpty("config", "listen", "db", "app-id", "token", "max-body", "log-level")
	return func(ctx context.Context, args []string) int {
		if len(args) > 0 {
			return c.p.unknownCommand(c.cmd, c.path, args[0])
		}
		flags := map[string]any{}
		set := func(key, v string) {
			if v != "" {
				flags[key] = v
			}
		}
		set("exit.listen", *listen)
		set("exit.db", *db)
		set("exit.app_id", *appID)
		set("exit.token", *token)
		set("exit.max_body", *maxBody)
		set("log.level", *level)
		if *insecure {
			flags["exit.insecure"] = true
		}
		if *batch != 0 {
			flags["exit.batch_limit"] = *batch
		}
		if *keyCache > 0 {
			flags["exit.key_cache"] = *keyCache
		}
		return runExitServer(ctx, c, cf, flags)
	}
}

// runExitServer loads the configuration with the flags over it and runs the exit server.
// Without --db and --app-id from any layer, it is a usage error (so a bare `idvault exit`
// prints its usage).
func runExitServer(ctx context.Context, cl *cmdline, cf configFlags, flags map[string]any) int {
	p := cl.p
	l, err := config.Load(config.Sources{Embedded: p.env.Embedded, File: cf.file, Environ: p.env.Environ, Flags: flags})
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit: %v\n", err)
		return exitConfig
	}
	if err := l.ErrFor("exit", "log"); err != nil { // the other sections are not read here
		fmt.Fprintln(p.stderr, "idvault exit: the configuration has problems:")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(p.stderr, "  - %s\n", line)
		}
		return exitConfig
	}
	c := l.Config.Exit
	var missing []string
	if c.DB == "" {
		missing = append(missing, "--db (exit.db, IDVAULT_EXIT__DB)")
	}
	if c.AppID == "" {
		missing = append(missing, "--app-id (exit.app_id, IDVAULT_EXIT__APP_ID)")
	}
	if len(missing) > 0 {
		return cl.usageError("%s required", strings.Join(missing, " and "))
	}
	if err := exitserver.CheckListen(c.Listen, c.Token, c.Insecure); err != nil {
		fmt.Fprintf(p.stderr, "idvault exit: %v\n", err)
		return exitConfig
	}
	log, closeLog := newLogger(l.Config.Log, p.stderr)
	defer closeLog() //nolint:errcheck // stderr: nothing to report a failure to
	if err := serveExit(ctx, p, c, log); err != nil {
		log.Error("idvault exit stopped", "err", err)
		return exitFail
	}
	return exitOK
}

// serveExit opens the database, then serves until ctx is cancelled and shuts down gracefully.
func serveExit(ctx context.Context, p *prog, c config.Exit, log *slog.Logger) error {
	open := p.env.OpenExitDB
	if open == nil {
		open = openExitDB
	}
	db, closeDB, err := open(ctx, c)
	if err != nil {
		return err
	}
	defer closeDB()
	srv := exitserver.New(db, exitserver.Config{
		Token: c.Token, BatchLimit: c.BatchLimit, MaxBody: c.MaxBodyBytes(), Logger: log,
		IdleTimeout: c.IdleTimeout, HeaderTimeout: c.HeaderTimeout, BodyIdleTimeout: c.BodyIdleTimeout,
		MemoryBudget: c.MemoryBudgetBytes(), Listen: c.Listen, AllowedHosts: c.AllowedHosts,
		MaxConns:      fitConnections(log, "exit.max_connections", c.MaxConnections),
		MaxConnsPerIP: c.MaxConnectionsPerIP,
	})
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Listen, err)
	}
	// GOGC and a soft memory limit a little above the budget, unless the operator set them.
	exitserver.TuneGC(c.MemoryBudgetBytes())
	addr := ln.Addr().String()
	log.Info("idvault exit listening", "addr", addr, "app_id", c.AppID, "token", c.Token != "",
		"batch_limit", c.BatchLimit, "max_body", strconv.FormatInt(c.MaxBodyBytes(), 10), "key_cache", c.KeyCache,
		"memory_budget", strconv.FormatInt(c.MemoryBudgetBytes(), 10))
	return serveUntilDone(ctx, p, srv.Serve, ln, log, c.ShutdownTimeout, srv.Shutdown)
}
