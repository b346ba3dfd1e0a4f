package fakeauth

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/address"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/jsonw"
)

// PublicIdentityEntry is one element of the public_identities answer.
type PublicIdentityEntry struct {
	// Email is the email exactly as the request gave it (after URL decoding), so a client can
	// match answers to its own input; identities are looked up by the normalised form.
	Email          string `json:"email"`
	PublicIdentity string `json:"public_identity"`
}

// PublicIdentities: GET /apps/:app_id/public_identities?emails=E1,E2.
//
// The list is the comma-separated values of every emails or email parameter, in URL order
// (commas raw or as %2C; several parameters are concatenated). A parameter that is present but
// empty is the empty list (answer []); no parameter at all is invalid_email. An empty item
// inside a list ("a@x.io,,b@x.io") is an invalid email. Each email gets the permanent public
// identity when it has a permanent identity and either no provisional identity or a PUT
// registration; otherwise the provisional public identity, created and stored on first use.
func (h *Handler) PublicIdentities(c *fiber.Ctx) error {
	app, err := h.app(c)
	if err != nil {
		return err
	}
	params, found, bad := queryValues(c, "emails", "email")
	switch {
	case bad:
		return apierr.InvalidEmail.Msg("the emails parameter is not valid percent-encoding")
	case !found:
		return apierr.InvalidEmail.Msg("missing query parameter emails (a comma-separated list)")
	}
	n := 0
	for _, p := range params {
		if p != "" {
			n += strings.Count(p, ",") + 1
		}
	}
	if n > h.maxEmails {
		return apierr.TooManyEmails.Msg("at most %d emails per request, got %d", h.maxEmails, n)
	}
	given := splitEmails(params, n)
	emails := make([]string, len(given))
	for i, g := range given {
		e, err := address.Normalize(g)
		if err != nil {
			return badEmail(i, g)
		}
		emails[i] = e
	}
	pubs, err := h.dir.PublicIdentities(app, emails, directory.FakeAuthPolicy)
	if err != nil {
		return dirError("public identities", err)
	}
	return jsonw.Send(c, func(b []byte) []byte { return appendEntries(b, given, pubs) })
}

// splitEmails is the comma-separated items of the non-empty params, as strings.Split gives
// them, n in all, in one allocation (splitting each parameter made one each).
func splitEmails(params []string, n int) []string {
	given := make([]string, 0, n)
	for _, p := range params {
		for p != "" {
			item, rest, more := strings.Cut(p, ",")
			given = append(given, item)
			p = rest
			if more && rest == "" {
				given = append(given, "") // a trailing comma: an empty item
			}
		}
	}
	return given
}

// appendEntries writes the answer [{"email": ..., "public_identity": ...}, ...] as
// encoding/json would write []PublicIdentityEntry, without reflection: a list of 100 spent more
// time in json.Marshal than in reading its 100 records.
func appendEntries(buf []byte, emails, pubs []string) []byte {
	buf = append(buf, '[')
	for i := range emails {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"email":`...)
		buf = jsonw.AppendString(buf, emails[i])
		buf = append(buf, `,"public_identity":`...)
		buf = jsonw.AppendString(buf, pubs[i])
		buf = append(buf, '}')
	}
	return append(buf, ']')
}
