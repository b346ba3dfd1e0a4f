package idserver

import (
	"github.com/gofiber/fiber/v2"

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
