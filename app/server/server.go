// Package server builds idvault's HTTP application: middleware, the error handler, health and
// metrics endpoints, and every route of every interface (routes.go, one flat list).
package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/clientip"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/console"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/app/httpguard/fiberguard"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/netguard"
	"github.com/idvault/idvault/app/verification"
)

// Deps are what the HTTP application is built from. A nil feature handler means the feature is
// switched off: its routes answer feature_not_enabled.
type Deps struct {
	Server   config.Server
	Logger   *slog.Logger
	Registry *prometheus.Registry
	// Checks are the readiness checks by name ("store", "smtp").
	Checks map[string]Checker
	// Warnings are shown by /readyz (for example: fake authentication is on).
	Warnings []string

	Admin          *admin.Handler
	FakeAuth       *fakeauth.Handler
	IdentityServer *idserver.Handler
	Verification   *verification.Handler

	// Console switches the web console on at /console/ (it needs Admin).
	Console ConsoleSettings
	// MetricsElsewhere leaves /metrics off the application (metrics.enabled false, or served on
	// metrics.listen by MetricsHandler): it answers feature_not_enabled.
	MetricsElsewhere bool
}

// ConsoleSettings are what the console shows beyond the apps.
type ConsoleSettings struct {
	Enabled bool
	Version string
	// DataFile is the data file's path (the server page shows its size).
	DataFile string
	// IdentityServerAppID is identity_server.app_id (for the snippets).
	IdentityServerAppID string
}

// ReadBufferSize is the request-header buffer (request line and headers) for a server whose
// public_identities requests may list maxEmails emails and that, with idTokens, takes clients'
// ID tokens (identity_server.oidc): 8 KiB for the rest of the request, 128 bytes per email (a
// 44-character address takes about 50 in the query) and 8 KiB more for an ID token in the
// Authorization header (providers that put groups or roles in ID tokens pass 7 KB, and a larger
// request gets a 431 that carries no CORS grant: a page sees only a failed fetch). A longer
// request line or header block is answered 431 request_header_too_large. fasthttp keeps the
// buffer per open connection: 8 KiB more each, 32 MiB at server.max_connections' 4096.
func ReadBufferSize(maxEmails int, idTokens bool) int {
	const base, perEmail, idToken = 8 << 10, 128, 8 << 10
	n := base + perEmail*max(maxEmails, 0)
	if idTokens {
		n += idToken
	}
	return n
}

// Server is the HTTP application with its dependencies.
type Server struct {
	deps    Deps
	proxies clientip.Proxies // server.trusted_proxies, parsed once
	ready   *readiness
	console *console.Handler
	App     *fiber.App
}

// Close stops the background readiness checks and waits for any in flight; call it after the
// application has shut down, before closing what the checks use (the store, the mailer).
func (s *Server) Close() { s.ready.close() }

// New builds the fiber application.
func New(d Deps) *Server {
	proxies := clientip.ParseValid(d.Server.TrustedProxies)
	s := &Server{deps: d, proxies: proxies, ready: newReadiness(d.Checks, d.Warnings, d.Logger)}
	handleErr := errorHandler(d.Logger, d.IdentityServer)
	maxEmails := 0
	if d.FakeAuth != nil {
		maxEmails = d.FakeAuth.MaxEmails()
	}
	readBuffer := ReadBufferSize(maxEmails, d.IdentityServer != nil && d.IdentityServer.OIDCIssuer() != "")
	app := fiber.New(fiber.Config{
		ReadBufferSize:        readBuffer,
		AppName:               "idvault",
		DisableStartupMessage: true,
		// Immutable: values from the request (params, query, body) are copied, so handlers may
		// keep them (in the store, in goroutines) without aliasing fasthttp's buffers.
		Immutable:    true,
		ReadTimeout:  d.Server.ReadTimeout,
		WriteTimeout: d.Server.WriteTimeout,
		IdleTimeout:  d.Server.IdleTimeout,
		BodyLimit:    d.Server.BodyLimit,
		ErrorHandler: handleErr,
		// Bodies are streamed, then read whole by readBodies (body.go) as they arrive.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		// Proxies: c.IP() is the peer address; the client behind a trusted proxy is found by
		// package clientip (X-Forwarded-For only from server.trusted_proxies).
		EnableTrustedProxyCheck: true,
	})
	registerAdminMetrics(d.Registry, d.Admin)
	app.Use(front(d.Logger, newHTTPMetrics(d.Registry), proxies, handleErr,
		httpguard.HostCheck(d.Server.Listen, d.Server.AllowedHosts), bodyDecoder(d.Server.BodyLimit)))
	s.App = app
	if d.Console.Enabled && d.Admin != nil {
		s.console = console.New(console.Deps{
			Admin: d.Admin, Ready: func(context.Context) (map[string]string, bool) { return s.ready.snapshot() }, Warnings: d.Warnings, Interfaces: s.interfaces(),
			IdentityServerAppID: d.Console.IdentityServerAppID, Version: d.Console.Version,
			DataFile: d.Console.DataFile, Logger: d.Logger, TrustedProxies: proxies, StoreError: storeError,
		})
	}
	s.routes(s.MetricsHandler())
	s.refuseUnknownMethods(handleErr)
	readBodies(app, handleErr, d.Server.BodyLimit)
	fiberguard.RefuseBadFraming(app, handleErr, func(reason string) error { return apierr.MalformedRequest.Msg("%s", reason) })
	return s
}

// Serve serves the application on ln behind netguard: accept errors retried, connections
// capped by server.max_connections and server.max_connections_per_ip (the trusted proxies'
// addresses are not counted per address).
func (s *Server) Serve(ln net.Listener) error {
	return s.App.Listener(netguard.Listen(ln, netguard.Config{
		MaxConns: s.deps.Server.MaxConnections, MaxConnsPerIP: s.deps.Server.MaxConnectionsPerIP,
		Exempt: func(ip net.IP) bool {
			a, ok := netip.AddrFromSlice(ip)
			return ok && s.proxies.Trusted(a.Unmap())
		}, Logger: s.deps.Logger,
	}))
}

// MetricsHandler serves the Prometheus metrics of the application, for a listener of its own
// (metrics.listen).
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{})
}

// interfaces lists the interfaces and whether each is on, for the console's server page.
func (s *Server) interfaces() []console.Interface {
	d := s.deps
	return []console.Interface{
		{Name: "Admin API", On: d.Admin != nil, Key: "admin.token", Routes: "/admin/apps, /admin/backup"},
		{Name: "Fake authentication", On: d.FakeAuth != nil, Key: "fakeauth.enabled", Routes: "/apps/{app_id}/…", Comment: "test-mode apps; development only"},
		{Name: "Reference identity server", On: d.IdentityServer != nil, Key: "identity_server.enabled", Routes: "/identity, /public_identity", Comment: d.Console.IdentityServerAppID},
		s.oidcInterface(),
		{Name: "Email verification", On: d.Verification != nil, Key: "verification.enabled", Routes: "/verification/email…"},
		{Name: "Operations", On: true, Key: "", Routes: "/healthz, /readyz, /metrics, /openapi.json"},
		{Name: "Web console", On: true, Key: "console.enabled", Routes: "/console/"},
	}
}

// oidcInterface is the identity server's ID-token sign-in as the server page shows it: on
// with the issuer, and the browser origins allowed.
func (s *Server) oidcInterface() console.Interface {
	i := console.Interface{Name: "Identity server: clients' ID tokens (OIDC)", Key: "identity_server.oidc.issuer", Routes: "/identity, /public_identity"}
	if is := s.deps.IdentityServer; is != nil && is.OIDCIssuer() != "" {
		i.On, i.Comment = true, "issuer "+is.OIDCIssuer()
		if origins := is.CORSOrigins(); len(origins) > 0 {
			i.Comment += "; browsers from " + strings.Join(origins, ", ")
		}
	}
	return i
}

// refuseUnknownMethods answers a request whose method is not a standard HTTP method with the
// catalogue's JSON method_not_allowed, instead of fiber's plain-text 400 "Invalid http method"
// (fiber answers those before any middleware or error handler runs).
func (s *Server) refuseUnknownMethods(handleErr fiber.ErrorHandler) {
	srv := s.App.Server()
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if slices.Contains(fiber.DefaultMethods, utils.UnsafeString(fctx.Method())) { // not kept: no copy
			next(fctx)
			return
		}
		c := s.App.AcquireCtx(fctx)
		defer s.App.ReleaseCtx(c)
		c.Set(fiber.HeaderAllow, strings.Join(fiber.DefaultMethods, ", "))
		_ = handleErr(c, fiber.ErrMethodNotAllowed)
	}
}

// featureOff answers every route of a switched-off feature.
func featureOff(*fiber.Ctx) error {
	return errFeatureOff
}

var metricsHandler = adaptor.HTTPHandler
