package idserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/idtoken"
)

// tokenEmailKey holds, for a request authenticated by an ID token, the normalised email the
// token vouches for.
const tokenEmailKey = "idvault.idtoken.email"

// Authenticate checks the request's credentials. A request carries the app token
// (identity_server.token: any email, every route) or, when identity_server.oidc is on, an ID
// token of the provider (its own email only for /identity; any email for /public_identity).
//
// The app token's SHA-256 digest is compared in constant time, so neither the token nor its
// length leaks through timing; a bearer that is not the app token is read as an ID token.
//
// Without an app token and without OIDC, a request needs no credentials but must say
// Content-Type: application/json (415 otherwise): a cross-site HTML form can only send form or
// text types, so a web page cannot drive a tokenless identity server on the visitor's machine.
// With OIDC on, the tokenless mode ends: browsers may be let in (identity_server.cors_origins),
// so every request needs a credential.
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	if h.tokenHash == nil && h.idtokens == nil {
		if !isJSON(utils.UnsafeString(c.Request().Header.ContentType())) { // not kept: no copy
			return apierr.UnsupportedMediaType.New()
		}
		return c.Next()
	}
	token, ok := bearer(c.Get(fiber.HeaderAuthorization))
	if ok && h.tokenHash != nil {
		sum := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(sum[:], h.tokenHash) == 1 {
			return c.Next()
		}
	}
	if !ok || h.idtokens == nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="idvault identity server"`)
		return apierr.Unauthorized.New()
	}
	return h.idToken(c, token)
}

// idToken authenticates a request by its ID token.
func (h *Handler) idToken(c *fiber.Ctx, token string) error {
	id, err := h.idtokens.Verify(c.UserContext(), token)
	if err != nil {
		var r *idtoken.Refusal
		if !errors.As(err, &r) {
			return apierr.Internal(err)
		}
		switch {
		case errors.Is(r.Kind, idtoken.ErrUnavailable):
			h.count("provider_unavailable")
			e := apierr.IdentityProviderUnavailable.Wrap(r.Cause)
			e.RetryAfter = max(r.RetryAfter, time.Second) // the client retries no sooner than the server asks the provider again
			return e
		case errors.Is(r.Kind, idtoken.ErrUnverified):
			h.count("unverified")
			return apierr.EmailNotVerified.Msg("%s", r.Reason)
		case errors.Is(r.Kind, idtoken.ErrNoEmail):
			h.count("unverified")
			return apierr.NoEmailClaim.Msg("%s", r.Reason)
		}
		h.count("invalid")
		h.log.Debug("id token refused", "reason", r.Reason)
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="idvault identity server", error="invalid_token", error_description="`+r.Reason+`"`)
		return apierr.InvalidToken.Msg("invalid ID token: %s", r.Reason)
	}
	e, err := address.Normalize(id.Email)
	if err != nil {
		h.count("unverified")
		return apierr.NoEmailClaim.Msg("the ID token's email claim is not a valid address")
	}
	c.Locals(tokenEmailKey, e)
	return c.Next()
}

// bearer reads "Authorization: Bearer <token>" (scheme case-insensitive).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

// isJSON reports whether a Content-Type header is application/json (parameters allowed).
func isJSON(contentType string) bool {
	media, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(media), fiber.MIMEApplicationJSON)
}
