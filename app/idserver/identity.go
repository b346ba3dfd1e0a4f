package idserver

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/jsonw"
)

// IdentityResponse is the user record POST /identity returns.
type IdentityResponse struct {
	// ID is the user ID hashed into the identity: a random UUID, fixed at creation.
	ID string `json:"id"`
	// ServiceIdentity is the secret permanent identity (b64).
	ServiceIdentity string `json:"serviceIdentity"`
	// TankerIdentity is ServiceIdentity again, under the name Tanker's own sample server
	// gives it, so that its clients work unchanged.
	TankerIdentity string `json:"tankerIdentity"`
	// ProvisionalIdentity is the secret provisional identity, when one exists.
	ProvisionalIdentity string `json:"provisionalIdentity,omitempty"`
	Registered          bool   `json:"registered"`
}

// Identity: POST /identity {"email": E}.
//
// It creates the email's permanent identity (new UUID, registered=false) when it has none and
// otherwise returns the stored record unchanged; the answer is sent after the record is
// committed.
func (h *Handler) Identity(c *fiber.Ctx) error {
	app, e, err := h.request(c, true)
	if err != nil {
		return err
	}
	r, err := h.dir.Permanent(app, e)
	if err != nil {
		return dirError("identity", err)
	}
	// A private identity: never stored by a browser or a proxy (a POST answer is cacheable only
	// with explicit freshness, but a cache set up to keep everything would keep it).
	c.Set(fiber.HeaderCacheControl, "no-store")
	return jsonw.Send(c, IdentityResponse{
		ID: r.UserID, ServiceIdentity: r.PermanentIdentity, TankerIdentity: r.PermanentIdentity,
		ProvisionalIdentity: r.ProvisionalIdentity, Registered: r.Registered,
	}.appendJSON)
}

// appendJSON writes the response as encoding/json would (a test compares them), without
// reflection.
func (r IdentityResponse) appendJSON(buf []byte) []byte {
	buf = append(buf, '{')
	buf = jsonw.AppendField(buf, true, "id", r.ID)
	start := len(buf) + len(`,"serviceIdentity":`)
	buf = jsonw.AppendField(buf, false, "serviceIdentity", r.ServiceIdentity)
	if r.TankerIdentity == r.ServiceIdentity { // the same value: copy it as written, not checked again
		buf = append(buf, `,"tankerIdentity":`...)
		buf = append(buf, buf[start:len(buf)-len(`,"tankerIdentity":`)]...)
	} else {
		buf = jsonw.AppendField(buf, false, "tankerIdentity", r.TankerIdentity)
	}
	if r.ProvisionalIdentity != "" {
		buf = jsonw.AppendField(buf, false, "provisionalIdentity", r.ProvisionalIdentity)
	}
	buf = append(buf, `,"registered":`...)
	buf = strconv.AppendBool(buf, r.Registered)
	return append(buf, '}')
}

// Register: PATCH /identity {"email": E}: sets registered=true and answers 200 text/plain "OK"
// (as Express's sendStatus(200)). An email without a permanent identity (no record, or only a
// provisional identity) is 400 "unknown user".
func (h *Handler) Register(c *fiber.Ctx) error {
	app, e, err := h.request(c, true)
	if err != nil {
		return err
	}
	if _, err := h.dir.Register(app, e); err != nil {
		return dirError("register", err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.SendString("OK")
}
