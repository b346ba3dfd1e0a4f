package idserver

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/jsonw"
)

// PublicIdentityResponse is the body of POST /public_identity.
type PublicIdentityResponse struct {
	PublicIdentity string `json:"publicIdentity"`
}

// PublicIdentity: POST /public_identity {"email": E}.
//
// A registered email gets its permanent public identity; any other gets the public identity of
// its provisional identity, which is created and stored on first use beside (never instead of)
// an existing permanent identity.
func (h *Handler) PublicIdentity(c *fiber.Ctx) error {
	app, e, err := h.request(c, false)
	if err != nil {
		return err
	}
	if err := h.admitNew(c, app, e); err != nil {
		return err
	}
	pub, err := h.dir.PublicIdentity(app, e, directory.IdentityServerPolicy)
	if err != nil {
		return dirError("public identity", err)
	}
	return jsonw.Send(c, PublicIdentityResponse{PublicIdentity: pub}.appendJSON)
}

// appendJSON writes the response as encoding/json would (a test compares them), without
// reflection.
func (r PublicIdentityResponse) appendJSON(buf []byte) []byte {
	buf = append(buf, '{')
	buf = jsonw.AppendField(buf, true, "publicIdentity", r.PublicIdentity)
	return append(buf, '}')
}

// admitNew applies identity_server.oidc.new_identities_per_user to a request authenticated by
// an ID token whose email has no record yet: it counts a creation, or refuses with 429
// too_many_new_identities and Retry-After.
func (h *Handler) admitNew(c *fiber.Ctx, app apps.App, email string) error {
	user, byToken := c.Locals(tokenEmailKey).(string)
	if !byToken || h.newIDs == nil {
		return nil
	}
	if _, err := h.dir.Lookup(app, email); !errors.Is(err, directory.ErrUnknownUser) {
		return nil // a record exists (or the store failed, which the lookup after says)
	}
	wait, ok := h.newIDs.take(user, time.Now())
	if ok {
		return nil
	}
	h.newRefused.Inc()
	e := apierr.TooManyNewIdentities.New()
	e.RetryAfter = wait
	return e
}
