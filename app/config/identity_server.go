package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/idvault/idvault/app/loopback"
	"github.com/idvault/idvault/app/userinfo"
)

// OIDC is identity_server.oidc: ID tokens of one OpenID provider, checked against the keys it
// publishes (discovery, then jwks_uri), are accepted beside the app token.
type OIDC struct {
	// Issuer is the provider's issuer URL, exactly as its ID tokens name it (iss). Empty: OIDC
	// is off.
	Issuer string `koanf:"issuer"`
	// Audience is the client ID the tokens are minted for (aud must contain it).
	Audience string `koanf:"audience"`
	// EmailClaim is the claim that holds the user's email.
	EmailClaim string `koanf:"email_claim"`
	// RequireEmailVerified refuses tokens whose email_verified claim is not true. With an
	// EmailClaim other than "email", the email claim must also name the same address (after
	// normalisation): email_verified speaks only for it.
	RequireEmailVerified bool `koanf:"require_email_verified"`
	// Algorithms are the signature algorithms accepted (asymmetric ones only).
	Algorithms []string `koanf:"algorithms"`
	// ClockSkew is the leeway on the token's expiry (and on nbf, when over 5 minutes).
	ClockSkew time.Duration `koanf:"clock_skew"`
	// NewIdentitiesPerUser bounds the new identities (emails without a record) one signed-in
	// user (the token's email) makes POST /public_identity create per NewIdentitiesWindow; 0:
	// no bound. The app token is never bounded.
	NewIdentitiesPerUser int           `koanf:"new_identities_per_user"`
	NewIdentitiesWindow  time.Duration `koanf:"new_identities_window"`
	// KeysMinAge and KeysMaxAge bound how long the provider's key set is used: for the max-age
	// of its Cache-Control, no less than KeysMinAge (max-age below it, no-store, no-cache) and
	// no more than KeysMaxAge (max-age above it, or none): a key the provider removes is
	// refused within KeysMaxAge while the provider answers.
	KeysMinAge time.Duration `koanf:"keys_min_age"`
	KeysMaxAge time.Duration `koanf:"keys_max_age"`
}

// On reports whether ID tokens are accepted.
func (o OIDC) On() bool { return strings.TrimSpace(o.Issuer) != "" }

// OIDCAlgorithms are the signature algorithms identity_server.oidc.algorithms may list: the
// asymmetric ones of JWS that OpenID providers use (the list; ES512 is left out, as no
// common provider signs ID tokens with it). Never "none", never HS* (a shared secret would let
// the public key sign tokens).
var OIDCAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"}

// DefaultIdentityServer holds the built-in identity server settings (off; OIDC off).
func DefaultIdentityServer() IdentityServer {
	return IdentityServer{
		OIDC: OIDC{EmailClaim: "email", RequireEmailVerified: true, Algorithms: []string{"RS256", "ES256"}, ClockSkew: time.Minute,
			NewIdentitiesPerUser: 1000, NewIdentitiesWindow: 24 * time.Hour, KeysMinAge: time.Minute, KeysMaxAge: 15 * time.Minute},
		CORSOrigins: []string{},
	}
}

// validate checks the OIDC and CORS keys (the rest of the section is checked in Validate).
func (s IdentityServer) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("identity_server.%s: "+format, append([]any{key}, args...)...))
	}
	o := s.OIDC
	if o.On() {
		if err := checkIssuer(o.Issuer); err != nil {
			bad("oidc.issuer", "%v", err)
		}
		if strings.TrimSpace(o.Audience) == "" {
			bad("oidc.audience", "required when identity_server.oidc.issuer is set: the client ID the ID tokens are minted for")
		}
		if strings.TrimSpace(o.EmailClaim) == "" {
			bad("oidc.email_claim", "must not be empty")
		}
		if len(o.Algorithms) == 0 {
			bad("oidc.algorithms", "list at least one of %s", strings.Join(OIDCAlgorithms, ", "))
		}
		for i, a := range o.Algorithms {
			if !slices.Contains(OIDCAlgorithms, a) {
				bad(fmt.Sprintf("oidc.algorithms[%d]", i), "%q is not allowed: want one of %s (never none or HS*)", a, strings.Join(OIDCAlgorithms, ", "))
			}
		}
	}
	// Bounds hold with OIDC off too (as verification's with verification off), so config check
	// finds them before an issuer turns OIDC on.
	errs = append(errs, checkBounds([]bounded{{"identity_server.oidc.clock_skew", o.ClockSkew, 0, 10 * time.Minute},
		{"identity_server.oidc.new_identities_window", o.NewIdentitiesWindow, time.Second, 8784 * time.Hour},
		{"identity_server.oidc.keys_min_age", o.KeysMinAge, time.Second, 24 * time.Hour},
		{"identity_server.oidc.keys_max_age", o.KeysMaxAge, time.Second, 24 * time.Hour}})...)
	if o.KeysMinAge > o.KeysMaxAge {
		bad("oidc.keys_min_age", "%s is over identity_server.oidc.keys_max_age (%s)", short(o.KeysMinAge), short(o.KeysMaxAge))
	}
	if o.NewIdentitiesPerUser < 0 {
		bad("oidc.new_identities_per_user", "must be 0 (no bound) or more")
	}
	for i, origin := range s.CORSOrigins {
		if err := checkOrigin(origin); err != nil {
			bad(fmt.Sprintf("cors_origins[%d]", i), "%v", err)
		}
	}
	if len(s.CORSOrigins) > 0 && !o.On() {
		bad("cors_origins", "needs identity_server.oidc.issuer: browsers call the identity server with ID tokens, never with the app token")
	}
	return errs
}

// checkIssuer accepts an https URL, or an http one on a loopback address (a provider on the
// same machine, tests): anything else would let the network forge the provider's keys.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	issuer = userinfo.Redact(issuer)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an issuer URL such as https://accounts.example.com", issuer)
	}
	switch {
	case TrustedTransport(u):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: http:// is allowed only on a loopback address (127.0.0.1, ::1, localhost); use https://", issuer)
	}
	return fmt.Errorf("%q: want an https:// URL", issuer)
}

// TrustedTransport is the rule for every URL idvault fetches keys from (an OpenID issuer, its
// jwks_uri, a redirect on the way): https, or http to a loopback address, where the network
// cannot forge the answer.
func TrustedTransport(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && loopback.IsHost(u.Hostname())
}

// checkOrigin accepts a browser origin exactly as browsers send it: scheme://host[:port], lower
// case, no path, no trailing slash; "*" is refused.
func checkOrigin(origin string) error {
	if strings.Contains(origin, "@") {
		return fmt.Errorf("%q is not an origin: it holds a user name or password", userinfo.Redact(origin))
	}
	if origin == "*" {
		return fmt.Errorf("\"*\" is refused: list each origin (scheme://host[:port])")
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(origin, "?") || strings.HasSuffix(origin, "#") ||
		strings.Contains(u.Host, "*") || origin != strings.ToLower(origin) {
		return fmt.Errorf("%q is not an origin: want scheme://host[:port] in lower case, such as https://app.example.com", origin)
	}
	host := u.Hostname()
	if net.ParseIP(host) == nil && !isHostName(host) {
		return fmt.Errorf("%q: the host is neither an IP address nor a host name", origin)
	}
	if labels := strings.Split(strings.TrimSuffix(host, "."), "."); net.ParseIP(host) == nil && numeric(labels[len(labels)-1]) {
		return fmt.Errorf("%q: a browser reads a host ending in a number as an IPv4 address and rewrites it; write the address as four decimal numbers (127.0.0.1)", origin)
	}
	if want := browserOrigin(u); want != origin {
		// The grant compares the Origin header byte for byte: this one would never match.
		return fmt.Errorf("%q is never sent by a browser, which writes this origin %q", origin, want)
	}
	return nil
}

// browserOrigin is how a browser serialises the origin of u (WHATWG URL): no default port (443
// for https, 80 for http) and no empty one, the port in decimal without leading zeros, an IP
// address in its canonical form (IPv4 dotted quad, IPv6 compressed in brackets, an IPv4-mapped
// one in hexadecimal: [::ffff:7f00:1]).
func browserOrigin(u *url.URL) string {
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
		if a.Is4In6() {
			b := a.As16()
			host = fmt.Sprintf("::ffff:%x:%x", uint16(b[12])<<8|uint16(b[13]), uint16(b[14])<<8|uint16(b[15]))
		}
		if a.Is6() {
			host = "[" + host + "]"
		}
	}
	port := strings.TrimLeft(u.Port(), "0")
	if port == "" && u.Port() != "" {
		port = "0"
	}
	if port == "" || u.Scheme == "https" && port == "443" || u.Scheme == "http" && port == "80" {
		return u.Scheme + "://" + host
	}
	return u.Scheme + "://" + host + ":" + port
}

// numeric reports whether a host label is a number (decimal, or hexadecimal with 0x), which makes
// a browser read the host as an IPv4 address.
func numeric(label string) bool {
	digits := label
	if strings.HasPrefix(label, "0x") {
		digits = label[2:]
		return strings.Trim(digits, "0123456789abcdef") == ""
	}
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}
