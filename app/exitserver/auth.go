package exitserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"strings"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/loopback"
)

// authenticate checks the bearer token when one is configured. Both sides are hashed first so
// that the comparison takes the same time whatever the length of the token sent.
func (s *Server) authenticate(x *exchange) error {
	if s.cfg.Token == "" {
		return nil
	}
	// The scheme in any case (RFC 9110 11.1): "bearer" is the same scheme.
	scheme, got, ok := strings.Cut(strings.TrimSpace(x.r.Header.Get("Authorization")), " ")
	ok = ok && strings.EqualFold(scheme, "bearer")
	sent := sha256.Sum256([]byte(strings.TrimSpace(got)))
	if subtle.ConstantTimeCompare(s.tokenHash[:], sent[:]) != 1 || !ok {
		x.w.Header().Set("WWW-Authenticate", `Bearer realm="idvault exit"`)
		return apierr.Unauthorized.Msg("missing or wrong bearer token")
	}
	return nil
}

// CheckListen refuses a listen address that is reachable from other machines when no token
// protects the server, unless insecure is set. Loopback addresses ("127.0.0.1:8000",
// "[::1]:8000", "localhost:8000") are always allowed.
func CheckListen(addr, token string, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want host:port", addr)
	}
	if token != "" || insecure || loopback.IsHost(host) {
		return nil
	}
	return fmt.Errorf("listen address %q is reachable from other machines and no token is set: "+
		"set --token (or exit.token), listen on 127.0.0.1, or pass --insecure", addr)
}
