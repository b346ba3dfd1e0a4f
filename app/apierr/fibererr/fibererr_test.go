package fibererr_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
)

// Every error a handler chain can return reaches the client as a catalogue code: fiber's own
// errors by their status, the interface's own body-size code for 413, and nothing else's text.
func TestFromFiber(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want apierr.Code
	}{
		{fiber.ErrNotFound, apierr.NotFound},
		{fiber.ErrMethodNotAllowed, apierr.MethodNotAllowed},
		{fiber.ErrRequestEntityTooLarge, apierr.PayloadTooLarge},
		{fiber.ErrRequestHeaderFieldsTooLarge, apierr.HeaderTooLarge},
		{fiber.NewError(fiber.StatusBadRequest, "malformed request line"), apierr.InvalidBody},
		{fiber.ErrRequestTimeout, apierr.InvalidBody},
		{fiber.ErrServiceUnavailable, apierr.InternalError},
		{errors.New("disk on fire at /var/lib/idvault"), apierr.InternalError},
		{fmt.Errorf("wrapped: %w", apierr.UserNotFound.New()), apierr.UserNotFound},
	} {
		e := fibererr.FromFiber(tc.err, apierr.PayloadTooLarge)
		require.Equal(t, tc.want, e.Code, "%v", tc.err)
		if tc.want == apierr.InternalError {
			require.NotContains(t, e.Message, "disk on fire", "an internal error's text reaches only the log")
		}
	}
	require.Equal(t, apierr.BodyTooLarge, fibererr.FromFiber(fiber.ErrRequestEntityTooLarge, apierr.BodyTooLarge).Code)
	require.Equal(t, "malformed request line", fibererr.FromFiber(fiber.NewError(400, "malformed request line"), apierr.BodyTooLarge).Message)
}

// Retry-After is whole seconds, never 0 (which would invite an immediate retry).
func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Nanosecond:         "1",
		time.Second:             "1",
		1200 * time.Millisecond: "2",
		15 * time.Minute:        "900",
	} {
		require.Equal(t, want, apierr.RetryAfterSeconds(d), "%v", d)
	}
}
