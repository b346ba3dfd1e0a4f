package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
)

var errFeatureOff = apierr.FeatureNotEnabled.New()

// routes registers every route of idvault, in one list that reads like the API.
func (s *Server) routes(metrics http.Handler) {
	app := s.App
	on := func(enabled bool, h fiber.Handler) fiber.Handler {
		if !enabled {
			return featureOff
		}
		return h
	}

	// Operations.
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/metrics", on(!s.deps.MetricsElsewhere, metricsHandler(metrics)))
	app.Get("/openapi.json", serveOpenAPI)

	// Admin API (app management, backup), behind the admin token. The token is checked by each
	// route, not by a group middleware, so that a refused request is logged and counted under
	// the route it asked for (a group middleware's route is "/admin").
	a := s.deps.Admin
	auth := on(a != nil, a.Authenticate)
	admin := app.Group("/admin")
	admin.Post("/apps", auth, a.CreateApp)
	admin.Get("/apps", auth, a.ListApps)
	admin.Get("/apps/:app_id", auth, a.ShowApp)
	admin.Patch("/apps/:app_id", auth, a.UpdateApp)
	admin.Post("/apps/:app_id/rotate-token", auth, a.RotateToken)
	admin.Delete("/apps/:app_id", auth, a.DeleteApp)
	admin.Get("/backup", auth, a.Backup)

	// Fake authentication server (test-mode apps; development and tests only).
	fa := s.deps.FakeAuth
	app.Get("/apps/:app_id/private_identity", on(fa != nil, fa.PrivateIdentity))
	app.Put("/apps/:app_id/private_identity", on(fa != nil, fa.Register))
	app.Get("/apps/:app_id/disposable_private_identity", on(fa != nil, fa.DisposablePrivateIdentity))
	app.Get("/apps/:app_id/public_identities", on(fa != nil, fa.PublicIdentities))

	// Reference identity server (one app; {"error": "..."} bodies).
	is := s.deps.IdentityServer
	simple := fibererr.WithStyle(apierr.StyleSimple)
	if is != nil && len(is.CORSOrigins()) > 0 {
		app.Use([]string{"/identity", "/public_identity"}, is.CORS) // identity_server.cors_origins: preflights and grants
	}
	app.Post("/identity", simple, on(is != nil, is.Authenticate), is.Identity)
	app.Patch("/identity", simple, on(is != nil, is.Authenticate), is.Register)
	app.Post("/public_identity", simple, on(is != nil, is.Authenticate), is.PublicIdentity)

	// Web console (server-rendered pages; not part of the OpenAPI document).
	if s.console != nil {
		s.console.Register(app.Group("/console"))
	}

	// Email verification API.
	v := s.deps.Verification
	app.Post("/verification/email", on(v != nil, v.Send))
	app.Post("/verification/email/code", on(v != nil, v.Code))
	app.Post("/verification/email/verify", on(v != nil, v.Verify))

}
