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
	var pub string
	if user, byToken := c.Locals(tokenEmailKey).(string); byToken && h.newIDs != nil {
		pub, err = h.limitedPublicIdentity(app, e, user)
	} else if pub, err = h.dir.PublicIdentity(app, e, directory.IdentityServerPolicy); err != nil {
		err = dirError("public identity", err)
	}
	if err != nil {
		return err
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

// limitedPublicIdentity answers a request authenticated by the ID token of user under
// identity_server.oidc.new_identities_per_user. The creation is counted before the directory is
// asked, so concurrent requests cannot create more records than the limit, and given back when
// the directory reports that it created none (the email had a record, or another request
// created it first): the email is read once, by the directory. When the user's window is full,
// the directory still answers emails that have a record, and refuses the others with 429
// too_many_new_identities and Retry-After.
func (h *Handler) limitedPublicIdentity(app apps.App, email, user string) (string, error) {
	w, wait, ok := h.newIDs.take(user, time.Now())
	pub, created, err := h.dir.PublicIdentityNew(app, email, directory.IdentityServerPolicy, ok)
	if ok && !created {
		h.newIDs.refund(user, w)
	}
	if errors.Is(err, directory.ErrNoNewRecord) {
		h.newRefused.Inc()
		e := apierr.TooManyNewIdentities.New()
		e.RetryAfter = wait
		return "", e
	}
	if err != nil {
		return "", dirError("public identity", err)
	}
	return pub, nil
}
