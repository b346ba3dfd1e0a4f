package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
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
	app.Get("/metrics", metricsHandler(metrics))

	// Admin API (app management, backup), behind the admin token.
	a := s.deps.Admin
	admin := app.Group("/admin", on(a != nil, a.Authenticate))
	admin.Post("/apps", a.CreateApp)
	admin.Get("/apps", a.ListApps)
	admin.Get("/apps/:app_id", a.ShowApp)
	admin.Post("/apps/:app_id/rotate-token", a.RotateToken)
	admin.Delete("/apps/:app_id", a.DeleteApp)
	admin.Get("/backup", a.Backup)

}
