package exitserver

import (
	"errors"
	"net/http"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/exit/exitdb"
)

// perIdentityBytes bounds the JSON size of one identity in an import body (a private identity
// is about 400 bytes of base64; escapes and spacing get generous room).
const perIdentityBytes = 4 << 10

type importRequest struct {
	Identities []string `json:"identities"`
}

// importShape is the body PUT /v1/identities wants, for its error messages.
const importShape = `{"identities": ["<private identity>", ...]}`

// importIdentities is PUT /v1/identities: all or nothing, 201 with the counts.
func (s *Server) importIdentities(x *exchange) error {
	limit := int64(s.cfg.BatchLimit)*perIdentityBytes + 4096
	// The body and what is decoded from it, reserved in the memory budget while they live.
	held, err := s.budget.reserve(2*bodyBound(x, limit), budgetWait)
	if err != nil {
		return err
	}
	defer held.release()
	var req importRequest
	if err := readJSON(x, limit, &req, importShape); err != nil {
		return err
	}
	if req.Identities == nil {
		return apierr.InvalidBody.Msg("want %s: identities is missing", importShape)
	}
	if len(req.Identities) > s.cfg.BatchLimit {
		return apierr.PayloadTooLarge.Msg("%d identities in one request; the limit is %d (exit.batch_limit)",
			len(req.Identities), s.cfg.BatchLimit)
	}
	res, err := s.db.Import(x.r.Context(), req.Identities)
	if err != nil {
		var ie *exitdb.ImportError
		if errors.As(err, &ie) {
			e := apierr.InvalidIdentity.Msg("%d of %d identities cannot be imported; nothing was stored",
				len(ie.Entries), len(req.Identities))
			entries := ie.Entries
			if entries == nil {
				entries = []exitdb.EntryError{}
			}
			e.Fields = map[string]any{"entries": entries}
			return e
		}
		return classifyDBError(err)
	}
	return x.json(http.StatusCreated, res)
}
