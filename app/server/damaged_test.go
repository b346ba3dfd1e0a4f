package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// Requests failing on a damaged data file answer internal_error saying so, and a storm of them
// logs one line naming the file per damagedLogEvery, not one per request; other failures are
// still logged each time.
func TestDamagedDataFileIsLoggedOncePerPeriod(t *testing.T) {
	t.Parallel()
	logs := &bytes.Buffer{}
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler(slog.New(slog.NewJSONHandler(logs, nil)), nil)})
	damaged := fmt.Errorf("directory: record: %w", fmt.Errorf("%w: /var/lib/idvault/idvault.db (page 7: reached twice)", store.ErrDamaged))
	app.Get("/damaged", func(*fiber.Ctx) error { return damaged })
	app.Get("/other", func(*fiber.Ctx) error { return fmt.Errorf("boom") })
	for range 5 {
		resp, body := do(t, app, http.MethodGet, "/damaged", nil)
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		require.Contains(t, body, apierr.MsgStorageDamaged)
		require.NotContains(t, body, "/var/lib", "no server path to the client")
		do(t, app, http.MethodGet, "/other", nil)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "idvault.db"), logs.String())
	require.Equal(t, 6, strings.Count(logs.String(), `"msg":"request failed"`), logs.String())
}
