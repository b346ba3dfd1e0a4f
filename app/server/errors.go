package server

import (
	"errors"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
	"github.com/idvault/idvault/app/httpguard/fiberguard"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/requestid/fiberid"
	"github.com/idvault/idvault/store"
)

// damagedLogEvery is how often a request failing on a damaged data file is logged.
const damagedLogEvery = time.Minute

// errorHandler turns any error a handler returns into the interface's JSON error body. Errors
// that are not *apierr.Error become internal_error; their text goes only to the log. is, when
// set, gives the identity server's error answers their CORS grant, including those answered
// before any route ran.
//
// A damaged data file (store.ErrDamaged) fails every request that meets it: one line per
// damagedLogEvery names the file and what is damaged, not one per request (/readyz and the
// store check's log line say it meanwhile).
func errorHandler(log *slog.Logger, is *idserver.Handler) fiber.ErrorHandler {
	damagedLog := &logging.Every{Period: damagedLogEvery}
	return func(c *fiber.Ctx, err error) error {
		if fiberguard.DropSpare(c, err) {
			return nil
		}
		is.GrantError(c)
		e := storeError(fibererr.FromFiber(err, apierr.BodyTooLarge))
		fiberid.Ensure(c)
		if e.Code.Status >= 500 && (!errors.Is(err, store.ErrDamaged) || damagedLog.Due(time.Now())) {
			log.Error("request failed", "request_id", fiberid.Of(c), "route", fiberid.Route(c), "code", e.Code.Name, "err", e.Error())
		}
		if e.RetryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, apierr.RetryAfterSeconds(e.RetryAfter))
		}
		return c.Status(e.Code.Status).JSON(apierr.Body(e, styleOf(c), fiberid.Of(c)))
	}
}

// styleOf is the error body style of the request: the one its route set, except that the
// identity server's paths always get {"error": "..."}, even when no route ran (wrong method,
// body over the limit), since its clients parse that shape only. Its paths are matched as the
// router matches them (any case, with or without a trailing slash).
func styleOf(c *fiber.Ctx) apierr.Style {
	if idserver.Path(c.Path()) {
		return apierr.StyleSimple
	}
	return fibererr.StyleOf(c)
}
