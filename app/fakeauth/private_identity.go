package fakeauth

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/identity"
)

// PrivateIdentityResponse is the body of GET private_identity and disposable_private_identity.
type PrivateIdentityResponse struct {
	PrivatePermanentIdentity   string `json:"private_permanent_identity"`
	PrivateProvisionalIdentity string `json:"private_provisional_identity,omitempty"`
}

// PrivateIdentity: GET /apps/:app_id/private_identity?email=E.
//
// It returns the email's permanent identity, creating it (user ID: a new random UUID) on the
// first call, and its provisional identity when one exists. A missing or empty email parameter
// is invalid_email (the request names no email), like an email that does not parse.
func (h *Handler) PrivateIdentity(c *fiber.Ctx) error {
	app, err := h.app(c)
	if err != nil {
		return err
	}
	email, err := singleEmail(c)
	if err != nil {
		return err
	}
	r, err := h.dir.Permanent(app, email)
	if err != nil {
		return dirError("private identity", err)
	}
	c.Set(fiber.HeaderCacheControl, noStore)
	return c.JSON(PrivateIdentityResponse{
		PrivatePermanentIdentity:   r.PermanentIdentity,
		PrivateProvisionalIdentity: r.ProvisionalIdentity,
	})
}

// DisposablePrivateIdentity: GET /apps/:app_id/disposable_private_identity.
//
// Every call makes a permanent identity for a new random user ID; nothing is stored.
func (h *Handler) DisposablePrivateIdentity(c *fiber.Ctx) error {
	app, err := h.app(c)
	if err != nil {
		return err
	}
	perm, err := identity.CreatePermanent(app.ID, app.Secret, uuid.NewString())
	if err != nil {
		return apierr.Internal(fmt.Errorf("fakeauth: disposable identity: %w", err))
	}
	c.Set(fiber.HeaderCacheControl, noStore)
	return c.JSON(PrivateIdentityResponse{PrivatePermanentIdentity: perm})
}

// noStore is the Cache-Control of answers holding a private identity: a GET answer without it
// may be stored by the browser's disk cache or a shared proxy (a 200 is cacheable by default).
const noStore = "no-store"

// singleEmail returns the normalised value of the one email query parameter.
func singleEmail(c *fiber.Ctx) (string, error) {
	vals, found, bad := queryValues(c, "email")
	switch {
	case bad:
		return "", apierr.InvalidEmail.Msg("the email parameter is not valid percent-encoding")
	case !found || len(vals) == 1 && vals[0] == "":
		return "", apierr.InvalidEmail.Msg("missing query parameter email")
	case len(vals) > 1:
		return "", apierr.InvalidEmail.Msg("give exactly one email parameter, not %d", len(vals))
	}
	email, err := address.Normalize(vals[0])
	if err != nil {
		return "", badEmail(-1, vals[0])
	}
	return email, nil
}
