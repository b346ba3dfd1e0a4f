package exitserver

import (
	"encoding/base64"
	"net/http"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// AuditBatchIDs is the most key IDs one POST /v1/audit may carry.
const AuditBatchIDs = 10000

// auditBodyBytes bounds an audit body: 10000 base64 IDs of 24 characters, quoted, with room.
const auditBodyBytes = 1 << 20

type auditRequest struct {
	IDs []string `json:"ids"`
}

// auditShape is the body POST /v1/audit wants, for its error messages.
const auditShape = `{"ids": ["<base64 of a 16-byte ID>", ...]}`

// AuditAnswer is the answer of POST /v1/audit.
type AuditAnswer struct {
	// AppID is the standard base64 of the app's ID, for hashing plain user IDs as Tanker does.
	AppID string `json:"app_id"`
	// Keys has one entry per ID of the request, in order.
	Keys []KeyAudit `json:"keys"`
}

// KeyAudit is the audit of one key ID.
type KeyAudit struct {
	// Reachable: a key published under the ID goes to an imported identity (directly, through
	// a group, or through a provisional identity).
	Reachable bool `json:"reachable"`
	// Holders are the users (standard base64 of the hashed user ID) whose identity would reach
	// it, when it is not reachable; empty otherwise, and when no user holds it.
	Holders []string `json:"holders"`
	// Provisional are the provisional identities nobody claimed whose private identity would
	// reach it, when it is not reachable, each as its public identity names it:
	// "hashed_email:<base64>" or "hashed_phone_number:<base64>". Holders and Provisional list
	// exitdb.MaxHolders (20) at most together, users first.
	Provisional []string `json:"provisional"`
}

// holderBytes bounds one holder in the answer: "hashed_phone_number:" and 44 base64
// characters, quoted, with a comma.
const holderBytes = 72

// audit is POST /v1/audit: {"ids": ["<base64 of a 16-byte resource, session or seed ID>"]}
// -> 200 {"app_id", "keys": [{"reachable", "holders", "provisional"}]}. It reads the dump's rows and the
// imported keys; it opens no key and decrypts nothing.
func (s *Server) audit(x *exchange) error {
	// The body, and an answer of up to MaxHolders holders per ID (an ID takes at least 27
	// bytes of body), reserved in the memory budget while they live.
	size := bodyBound(x, auditBodyBytes)
	ids := min(size/27+1, AuditBatchIDs)
	held, err := s.budget.reserve(2*size+ids*(exitdb.MaxHolders*holderBytes+80), budgetWait)
	if err != nil {
		return err
	}
	defer held.release()
	var req auditRequest
	if err := readJSON(x, auditBodyBytes, &req, auditShape); err != nil {
		return err
	}
	if req.IDs == nil {
		return apierr.InvalidBody.Msg("want %s: ids is missing", auditShape)
	}
	if len(req.IDs) > AuditBatchIDs {
		return apierr.PayloadTooLarge.Msg("%d IDs in one audit; the limit is %d", len(req.IDs), AuditBatchIDs)
	}
	keyIDs := make([]encryption.SimpleID, len(req.IDs))
	for i, s := range req.IDs {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != encryption.IDSize {
			return apierr.InvalidBody.Msg("ids[%d] is not the standard base64 of 16 bytes", i)
		}
		copy(keyIDs[i][:], b)
	}
	ctx := s.lookupContext()
	defer ctx.cancel()
	audits, err := s.db.AuditKeys(ctx, keyIDs)
	if err != nil {
		return classifyDecryptError(err)
	}
	ans := AuditAnswer{AppID: base64.StdEncoding.EncodeToString(s.db.AppID()), Keys: make([]KeyAudit, len(audits))}
	for i, a := range audits {
		k := KeyAudit{Reachable: a.Reachable, Holders: make([]string, len(a.Holders)), Provisional: make([]string, len(a.Provisional))}
		for j, h := range a.Holders {
			k.Holders[j] = base64.StdEncoding.EncodeToString(h)
		}
		for j, p := range a.Provisional {
			k.Provisional[j] = "hashed_" + p.Target + ":" + base64.StdEncoding.EncodeToString(p.HashedValue)
		}
		ans.Keys[i] = k
	}
	return x.json(http.StatusOK, ans)
}
