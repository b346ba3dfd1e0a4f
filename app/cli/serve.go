package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"idvault/app/config"
	"idvault/store"
)

func runServe(ctx context.Context, p *prog, args []string) int {
	fs := p.newFlags("serve", "serve [--config FILE] [--listen ADDR] [--data FILE] [--log-level LEVEL]")
	var cf configFlags
	cf.register(fs)
	listen := fs.String("listen", "", "listen address host:port (overrides server.listen)")
	level := fs.String("log-level", "", "debug, info, warn or error (overrides log.level)")
	if _, code, ok := p.parse(fs, args); !ok {
		return code
	}
	flags := map[string]any{}
	if *listen != "" {
		flags["server.listen"] = *listen
	}
	if *level != "" {
		flags["log.level"] = *level
	}
	l, code, ok := p.load(cf, flags)
	if !ok {
		return code
	}
	log := newLogger(l.Config.Log, p.stderr)
	log.Info("configuration loaded", "profile", l.Profile)
	if err := serve(ctx, p, l.Config, log); err != nil {
		log.Error("idvault stopped", "err", err)
		return exitFail
	}
	return exitOK
}

// serve runs the server until ctx is cancelled, then shuts down gracefully: in-flight requests
// finish (up to server.shutdown_timeout) and the store is closed cleanly.
func serve(ctx context.Context, p *prog, c config.Config, log *slog.Logger) error {
	mk, created, err := store.LoadOrCreateMasterKey(c.Store.KeyFile)
	if err != nil {
		return err
	}
	if created {
		log.Warn("created a new master key: back it up apart from the data file; without it no secret can be read", "key_file", c.Store.KeyFile)
	}
	st, err := store.Open(store.Options{Path: c.Store.Path, MasterKey: mk, LockTimeout: c.Store.LockTimeout})
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	adminToken, err := ensureAdminToken(p, c, log)
	if err != nil {
		return err
	}
	srv, cleanup, err := build(ctx, c, log, st, mk, adminToken)
	if err != nil {
		return err
	}
	defer cleanup()

	ln, err := net.Listen("tcp", c.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Server.Listen, err)
	}
	addr := ln.Addr().String()
	log.Info("idvault listening", "addr", addr, "data", c.Store.Path,
		"fakeauth", c.FakeAuth.Enabled, "identity_server", c.IdentityServer.Enabled, "verification", c.Verification.Enabled)
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
	log.Info("shutting down: finishing in-flight requests", "timeout", c.Server.ShutdownTimeout.String())
	if err := srv.App.ShutdownWithTimeout(c.Server.ShutdownTimeout); err != nil {
		log.Error("shutdown", "err", err)
	}
	return nil
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
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write admin token file: %w", err)
	}
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write admin token file: %w", err)
	}
	if isTerminal(p.stdout) {
		fmt.Fprintf(p.stdout, "Generated the admin token (shown once; kept in %s, mode 0600):\n  %s\n", path, tok)
	} else {
		log.Warn("generated the admin token; it is not printed (stdout is not a terminal): read it from the token file", "token_file", path)
	}
	return tok, nil
}
