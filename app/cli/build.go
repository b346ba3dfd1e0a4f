package cli

import (
	"context"
	"log/slog"

	"idvault/app/admin"
	"idvault/app/apps"
	"idvault/app/config"
	"idvault/app/server"
	"idvault/store"
)

// build wires the HTTP application from the configuration: one place where every component is
// constructed and handed its dependencies. cleanup releases what build opened.
func build(ctx context.Context, c config.Config, log *slog.Logger, st *store.Store, mk *store.MasterKey, adminToken string) (*server.Server, func(), error) {
	registry, err := apps.NewRegistry(st, c.Apps)
	if err != nil {
		return nil, nil, err
	}
	reg := server.NewRegistry()
	checks := map[string]server.Checker{
		"store": server.CheckFunc(func(context.Context) error { return st.Ping() }),
	}
	var warnings []string
	deps := server.Deps{
		Server: c.Server, Logger: log, Registry: reg, Checks: checks,
		Admin: admin.New(registry, st, adminToken),
	}
	deps.Warnings = warnings
	_ = mk
	return server.New(deps), func() {}, nil
}
