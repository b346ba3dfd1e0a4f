package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"idvault/app/config"
	"idvault/app/exitserver"
)

const exitServeUsage = "exit --db DSN --app-id ID [--listen ADDR] [--token T] [--insecure] " +
	"[--batch-limit N] [--max-body SIZE] [--key-cache N] [--config FILE] [--log-level L]"

// runExitServer runs the exit HTTP server (`idvault exit --listen ... --db ... --app-id ...`).
// Every flag is also a key of the config's exit: section and an IDVAULT_EXIT__* variable.
func runExitServer(ctx context.Context, p *prog, args []string) int {
	fs, o := exitServerFlags(p)
	cf, listen, db, appID, token, insecure := &o.cf, o.listen, o.db, o.appID, o.token, o.insecure
	batch, maxBody, keyCache, level := o.batch, o.maxBody, o.keyCache, o.level
	pos, code, ok := p.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(p.stderr, "idvault exit: unexpected argument %q (subcommands come first: idvault exit --help)\n", pos[0])
		return exitUsage
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
	l, code, ok := p.load(*cf, flags)
	if !ok {
		return code
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
		for _, m := range missing {
			fmt.Fprintf(p.stderr, "idvault exit: %s is required\n", m)
		}
		return exitConfig
	}
	if err := exitserver.CheckListen(c.Listen, c.Token, c.Insecure); err != nil {
		fmt.Fprintf(p.stderr, "idvault exit: %v\n", err)
		return exitConfig
	}
	log := newLogger(l.Config.Log, p.stderr)
	if err := serveExit(ctx, p, c, log); err != nil {
		log.Error("idvault exit stopped", "err", err)
		return exitFail
	}
	return exitOK
}

type exitServerOpts struct {
	cf                                       configFlags
	listen, db, appID, token, maxBody, level *string
	insecure                                 *bool
	batch, keyCache                          *int
}

// exitServerFlags defines the exit server's flags (shared with `idvault exit --help`).
func exitServerFlags(p *prog) (*flag.FlagSet, *exitServerOpts) {
	fs := p.newFlags("exit", exitServeUsage)
	o := &exitServerOpts{}
	fs.StringVar(&o.cf.file, "config", "", "configuration file (YAML), layered over the embedded defaults")
	o.listen = fs.String("listen", "", "listen address host:port (exit.listen; default 127.0.0.1:8000)")
	o.db = fs.String("db", "", "PostgreSQL connection string of the restored dump (exit.db)")
	o.appID = fs.String("app-id", "", "base64 app ID whose data is decrypted (exit.app_id)")
	o.token = fs.String("token", "", "bearer token required on every route but /healthz (exit.token)")
	o.insecure = fs.Bool("insecure", false, "allow a non-loopback --listen without a token (exit.insecure)")
	o.batch = fs.Int("batch-limit", 0, "most identities in one import request (exit.batch_limit; default 1000)")
	o.maxBody = fs.String("max-body", "", "largest simple-format ciphertext, e.g. 64MiB (exit.max_body; default 64MiB)")
	o.keyCache = fs.Int("key-cache", 0, "resolved keys kept in memory (exit.key_cache; default 100000)")
	o.level = fs.String("log-level", "", "debug, info, warn or error (log.level)")
	return fs, o
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
	})
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Listen, err)
	}
	addr := ln.Addr().String()
	log.Info("idvault exit listening", "addr", addr, "app_id", c.AppID, "token", c.Token != "",
		"batch_limit", c.BatchLimit, "max_body", strconv.FormatInt(c.MaxBodyBytes(), 10), "key_cache", c.KeyCache)
	errc := make(chan error, 1)
	go func() { errc <- srv.App.Listener(ln) }()
	if p.env.Ready != nil {
		p.env.Ready(addr)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "timeout", c.ShutdownTimeout.String())
	if err := srv.Shutdown(c.ShutdownTimeout); err != nil {
		log.Error("shutdown", "err", err)
	}
	return nil
}
