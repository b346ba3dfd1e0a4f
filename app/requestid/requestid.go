// Package requestid holds the rules of the X-Request-ID every answer of idvault's HTTP servers
// (`idvault serve` and `idvault exit`) carries, logged with the request and echoed as the
// trace_id of error bodies: which client ID is kept (Pick), and new IDs (New). It imports no
// HTTP framework; the main server's fiber side is app/requestid/fiberid.
package requestid

import (
	"crypto/rand"

	"github.com/google/uuid"
)

// MaxLen is the longest client X-Request-ID kept.
const MaxLen = 64

// New makes a request ID: a random (version 4) UUID read from crypto/rand on its own. On
// Linux 6.11 and later crypto/rand reads from the vDSO's getrandom, without a lock or a system
// call (BenchmarkNext gives the cost of an ID); a block of IDs shared under a lock would make
// requests wait on one another under load.
func New() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never returns an error
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant RFC 4122
	return u.String()
}

// Pick is the request ID of a request whose X-Request-ID header is given ("" when it has
// none): the client's own when it is short (up to MaxLen characters) and made of safe
// characters (letters, digits, '-', '_', '.', ':'), a new one (New) otherwise. The ID is
// logged and echoed as trace_id, so quotes, escapes and control characters must never get
// through.
func Pick(given string) string {
	if Safe(given) {
		return given
	}
	return New()
}

// Safe reports whether a client's X-Request-ID is kept as it is (Pick).
func Safe(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.' || b == ':') {
			return false
		}
	}
	return true
}
