package verification

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/store"
)

// CodeDigits is the length of a verification code.
const CodeDigits = 8

const (
	// codeSpace is the number of distinct codes (10^8).
	codeSpace = 100_000_000
	// codeBound is the largest multiple of codeSpace that fits in a uint32 (42 * 10^8). A random
	// uint32 below it, reduced mod codeSpace, is uniform; values at or above it are drawn again
	// (probability 2.2%), so there is no modulo bias.
	codeBound = (1 << 32) / codeSpace * codeSpace
)

// newCode returns CodeDigits uniform random decimal digits read from r (crypto/rand.Reader in
// production), by rejection sampling.
func newCode(r io.Reader) (string, error) {
	var b [4]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", fmt.Errorf("verification: generate code: %w", err)
		}
		if v := binary.BigEndian.Uint32(b[:]); v < codeBound {
			return fmt.Sprintf("%0*d", CodeDigits, v%codeSpace), nil
		}
	}
}

// generateCode is newCode on crypto/rand.
func generateCode() (string, error) { return newCode(rand.Reader) }

// codeMAC is what the store keeps of a code: HMAC-SHA256 under the server's code key, bound to
// the app and the address, so a stored MAC is useless for another address or without the key.
func codeMAC(key, appID []byte, email, code string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("idvault verification code v1\x00"))
	m.Write(appID)
	m.Write([]byte{0})
	m.Write([]byte(email))
	m.Write([]byte{0})
	m.Write([]byte(code))
	return m.Sum(nil)
}

// issue is the store request for a new code of app for email. Test-mode apps keep the code
// (sealed) so /code can return it; the others keep only its MAC.
func (h *Handler) issue(app *apps.App, email, code string) store.Issue {
	in := store.Issue{
		AppID: app.ID, Email: email, MAC: codeMAC(h.key, app.ID, email, code),
		TTL: h.cfg.CodeTTL, Retain: h.cfg.CodeTTL, Keep: KeepCodes, Attempts: h.attempts,
	}
	if app.Test {
		in.Plain = code
	}
	return in
}
