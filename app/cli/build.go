package cli

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/app/verification"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/store"
)

// build wires the HTTP application from the configuration: one place where every component is
// constructed and handed its dependencies. cleanup releases what build opened.
func build(ctx context.Context, c config.Config, log *slog.Logger, st *store.Store, mk *store.MasterKey, adminToken string, bi BuildInfo) (*server.Server, func(), error) {
	registry, err := apps.NewRegistry(st, c.Apps)
	if err != nil {
		return nil, nil, err
	}
	deps := baseDeps(c, log, st, registry, adminToken, bi)
	dir := directory.New(st)
	registry.AfterDelete(dir.Forget)
	cleanup := dir.Close

	if c.FakeAuth.Enabled {
		addFakeAuth(&deps, c, registry, dir)
	}
	if c.IdentityServer.Enabled {
		if err := addIdentityServer(&deps, c, registry, dir); err != nil {
			return nil, nil, err
		}
	}
	if c.Verification.Enabled {
		stopVerification, err := addVerification(ctx, &deps, c, st, mk, registry)
		if err != nil {
			return nil, nil, err
		}
		previous := cleanup
		cleanup = func() { stopVerification(); previous() }
	}
	return server.New(deps), cleanup, nil
}

// baseDeps are the server's dependencies whatever the configuration: the metrics registry
// (with the build info), the store's readiness check, the admin API and the console.
func baseDeps(c config.Config, log *slog.Logger, st *store.Store, registry *apps.Registry, adminToken string, bi BuildInfo) server.Deps {
	reg := server.NewRegistry()
	bi = bi.withDefaults()
	server.RegisterBuildInfo(reg, bi.Version, bi.Revision, bi.GoVersion)
	return server.Deps{
		Server: c.Server, Logger: log, Registry: reg,
		Checks: map[string]server.Checker{
			"store": server.CheckFunc(func(context.Context) error { return st.Ping() }),
		},
		Admin: admin.New(registry, st, adminToken, admin.Options{
			MaxWrongTokens: c.Admin.MaxWrongTokens, WrongTokenWindow: c.Admin.WrongTokenWindow,
			LockDuration: c.Admin.LockDuration, TrustedProxies: c.Server.TrustedProxies, Logger: log,
		}),
		Console: server.ConsoleSettings{
			Enabled: c.Console.On(c.Server.Listen), Version: bi.Version, DataFile: st.Path(),
			IdentityServerAppID: c.IdentityServer.AppID,
		},
		MetricsElsewhere: !c.Metrics.OnMainListener(),
	}
}

// addFakeAuth adds fake authentication to deps, with the warning it deserves in the log and
// on /readyz.
func addFakeAuth(deps *server.Deps, c config.Config, registry *apps.Registry, dir *directory.Directory) {
	const warn = "fake authentication is on: it hands out private identities without authentication (development and tests only)"
	log := deps.Logger
	log.Warn(warn, "listen", c.Server.Listen)
	deps.Warnings = append(deps.Warnings, warn)
	deps.FakeAuth = fakeauth.New(registry, dir, c.FakeAuth, deps.Registry, log)
}

// addIdentityServer adds the identity server to deps, with a readiness check that its app
// exists; it fails only on an identity_server.app_id that is not an app ID.
func addIdentityServer(deps *server.Deps, c config.Config, registry *apps.Registry, dir *directory.Directory) error {
	log := deps.Logger
	id, err := apps.ParseID(c.IdentityServer.AppID)
	if err != nil {
		return errors.New("identity_server.app_id: not an app ID")
	}
	if _, err := registry.Get(id); err != nil {
		log.Warn("identity server: its app does not exist yet; requests fail until it is created", "app_id", c.IdentityServer.AppID)
	}
	deps.IdentityServer = idserver.New(id, registry, dir, c.IdentityServer, deps.Registry, log)
	if o := c.IdentityServer.OIDC; o.On() {
		// Not a readiness check: the app token keeps working while the provider is down.
		log.Info("identity server: clients may call it with ID tokens (keys fetched on the first token)",
			"issuer", o.Issuer, "audience", o.Audience, "cors_origins", strings.Join(c.IdentityServer.CORSOrigins, ","))
	}
	deps.Checks["identity_server_app"] = server.CheckFunc(func(context.Context) error {
		_, err := registry.Get(id)
		return err
	})
	return nil
}

// addVerification adds the verification API to deps, with its mail sender's readiness check,
// and starts the sweeper of expired codes; stop ends the sweeper and closes the sender.
func addVerification(ctx context.Context, deps *server.Deps, c config.Config, st *store.Store, mk *store.MasterKey, registry *apps.Registry) (stop func(), err error) {
	log := deps.Logger
	sender, err := mail.New(c.Mail, log)
	if err != nil {
		return nil, err
	}
	// The SMTP server is checked in the background by the readiness checks (a hanging
	// server must not delay start-up): a failure is logged there and shown by /readyz.
	v, err := verification.New(verification.Deps{
		Apps: registry, Store: st, Mailer: sender, Config: c.Verification,
		TrustedProxies: c.Server.TrustedProxies, CodeKey: mk.Derive("verification code hmac"),
		Metrics: deps.Registry, Logger: log,
	})
	if err != nil {
		sender.Close()
		return nil, err
	}
	deps.Verification = v
	deps.Checks["smtp"] = server.CheckFunc(sender.Check)
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); v.RunSweeper(sweepCtx, time.Minute) }()
	return func() { stopSweep(); <-swept; sender.Close() }, nil
}
