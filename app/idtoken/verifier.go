package idtoken

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/idvault/idvault/app/config"
)

// The kinds of refusal. A *Refusal wraps one of them (errors.Is).
var (
	// ErrInvalid: the token is not a valid ID token of the provider for the audience
	// (malformed, algorithm not accepted, unknown key, bad signature, expired, wrong issuer or
	// audience, azp naming another party or missing on a token for several audiences, an
	// access token typed at+jwt or with Keycloak's typ claim Bearer, exp, nbf or iat that is not
	// a number, an address claim with white space or control characters around it).
	ErrInvalid = errors.New("invalid ID token")
	// ErrNoEmail: a valid token without a usable email claim.
	ErrNoEmail = errors.New("no email claim")
	// ErrUnverified: a valid token whose email_verified is not true (when required).
	ErrUnverified = errors.New("email not verified")
	// ErrUnavailable: the provider's discovery document or keys cannot be fetched.
	ErrUnavailable = errors.New("identity provider unavailable")
)

// Refusal is a token that was not accepted. Reason is safe to show to the client (it never
// holds the token, the subject or the email); Cause is for the log.
type Refusal struct {
	Kind   error
	Reason string
	Cause  error
	// RetryAfter, for ErrUnavailable, is how long until the provider is asked again (0: at
	// once).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Kind.Error() + ": " + r.Reason }

// Unwrap gives the kind and the cause.
func (r *Refusal) Unwrap() []error { return []error{r.Kind, r.Cause} }

// Identity is who a valid ID token speaks for.
type Identity struct {
	// Email is the email claim as the token holds it (not normalised).
	Email   string
	Subject string
}

// Options are the verifier's collaborators and timings; zero values take the defaults.
type Options struct {
	// Client fetches discovery and keys (default: newClient, 10 s per fetch, nothing on this
	// machine fetched for an issuer that is not on it).
	Client *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RefetchInterval: at most one key set refetch for unknown kids per interval (default 10 s).
	RefetchInterval time.Duration
	// RetryAfterFailure: after a failed fetch, the provider is not asked again for this long
	// (default 2 s); tokens that need it are answered ErrUnavailable at once.
	RetryAfterFailure time.Duration
	// Fetches, when set, is called after each fetch of the provider's keys with "ok" or
	// "failed" (for metrics).
	Fetches func(result string)
	Logger  *slog.Logger
}

// Verifier checks ID tokens of one provider for one audience.
type Verifier struct {
	cfg  config.OIDC
	oidc *oidc.IDTokenVerifier
	now  func() time.Time
}

// New makes a verifier for cfg (identity_server.oidc, already validated). Nothing is fetched
// until the first token arrives.
func New(cfg config.OIDC, o Options) *Verifier {
	if o.Client == nil {
		o.Client = newClient(cfg.Issuer)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.RefetchInterval = cmp(o.RefetchInterval, 10*time.Second)
	o.RetryAfterFailure = cmp(o.RetryAfterFailure, 2*time.Second)
	if o.Fetches == nil {
		o.Fetches = func(string) {}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var names []string
	var algs []jose.SignatureAlgorithm
	for _, a := range cfg.Algorithms {
		if slices.Contains(config.OIDCAlgorithms, a) { // never none or HS*, whatever the caller passed
			names, algs = append(names, a), append(algs, jose.SignatureAlgorithm(a))
		}
	}
	ks := &keySet{
		issuer: cfg.Issuer, algs: algs, client: o.Client, now: o.Now, log: o.Logger,
		refetchInterval: o.RefetchInterval, retryAfterFailure: o.RetryAfterFailure,
		// identity_server.oidc.keys_min_age and keys_max_age; a config made in code without them
		// takes the defaults.
		minAge: cmp(cfg.KeysMinAge, time.Minute), maxAge: max(cmp(cfg.KeysMaxAge, 15*time.Minute), cmp(cfg.KeysMinAge, time.Minute)),
		fetches: o.Fetches,
	}
	v := oidc.NewVerifier(cfg.Issuer, ks, &oidc.Config{
		ClientID:             cfg.Audience,
		SupportedSigningAlgs: names,
		// exp and nbf are checked by checkTimes: go-oidc judges both at one instant, so a
		// leeway taken off the clock for exp would be charged against nbf.
		SkipExpiryCheck: true,
	})
	return &Verifier{cfg: cfg, oidc: v, now: o.Now}
}

// nbfLeeway is go-oidc's own leeway on nbf, kept when clock_skew is shorter.
const nbfLeeway = 5 * time.Minute

// checkTimes checks exp, nbf and iat on the real clock: exp (required) may have passed by at
// most clock_skew; nbf and iat, when present, may be ahead by clock_skew, or 5 minutes
// (go-oidc's leeway on nbf) when that is longer. Before, go-oidc judged exp and nbf at
// now - clock_skew, so with a clock_skew over 5 minutes a token just minted with nbf = now was
// refused as not valid yet. go-oidc does not look at iat; OpenID Connect Core (3.1.3.7, item
// 10) lets a client refuse a token issued too far from the current time, and a token "issued"
// in the future is one no provider with a working clock mints.
//
// A time claim that is not a JSON number is refused: go-oidc reads "exp": "1767225600" (a
// string) as the number, and a string nbf or iat would otherwise be ignored while its number
// form is checked, so the token would mean one thing here and another to a stricter reader.
func (v *Verifier) checkTimes(tok *oidc.IDToken, claims map[string]json.RawMessage) *Refusal {
	if r := timesNotNumbers(claims); r != "" {
		return &Refusal{Kind: ErrInvalid, Reason: r}
	}
	now := v.now()
	if tok.Expiry.IsZero() || tok.Expiry.Before(now.Add(-v.cfg.ClockSkew)) {
		return &Refusal{Kind: ErrInvalid, Reason: "expired"}
	}
	latest := float64(now.Add(max(v.cfg.ClockSkew, nbfLeeway)).Unix())
	if ahead(claims["nbf"], latest) {
		return &Refusal{Kind: ErrInvalid, Reason: "not valid yet (nbf is in the future)"}
	}
	if ahead(claims["iat"], latest) {
		return &Refusal{Kind: ErrInvalid, Reason: "issued in the future (iat)"}
	}
	return nil
}

// ahead reports whether the time claim raw (seconds since the epoch; absent: no) is after
// latest. Compared as numbers, not as times: go-oidc turns a number past int64 seconds (1e300)
// into the smallest int64, and time.Unix wraps one near it into the far past, so a token that
// is never valid would have passed. checkTimes has refused claims that are not numbers.
func ahead(raw json.RawMessage, latest float64) bool {
	var t float64
	if raw == nil || json.Unmarshal(raw, &t) != nil {
		return false
	}
	return math.Trunc(t) > latest
}

// timesNotNumbers names the first of exp, nbf and iat that is present and not a number ("" when
// none).
func timesNotNumbers(claims map[string]json.RawMessage) string {
	for _, name := range []string{"exp", "nbf", "iat"} {
		if raw, ok := claims[name]; ok && !isNumber(raw) {
			return "the " + name + " claim is not a number (seconds since 1970, RFC 7519 NumericDate)"
		}
	}
	return ""
}

// notNumbers is timesNotNumbers for a payload go-oidc refused (it refuses an nbf or iat that
// is an array or a boolean before checkTimes sees it).
func notNumbers(payload []byte) string {
	var claims map[string]json.RawMessage
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return timesNotNumbers(claims)
}

// isNumber reports whether raw, a JSON value of the claims, is a number (not a string holding
// one, not null).
func isNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// checkAuthorizedParty applies OpenID Connect Core 1.0 section 3.1.3.7, items 4 and 5, which
// go-oidc leaves to its caller: azp (the authorized party), when present, must be a string
// equal to the audience (the client ID); a token minted for several audiences must carry it.
// A token for one audience without azp stays valid (most providers send none).
func (v *Verifier) checkAuthorizedParty(tok *oidc.IDToken, claims map[string]json.RawMessage) *Refusal {
	raw, ok := claims["azp"]
	if !ok {
		if len(tok.Audience) > 1 {
			return &Refusal{Kind: ErrInvalid, Reason: "minted for several audiences and no azp (authorized party) claim"}
		}
		return nil
	}
	var azp string
	if err := json.Unmarshal(raw, &azp); err != nil || string(raw) == "null" {
		return &Refusal{Kind: ErrInvalid, Reason: "the azp (authorized party) claim is not a string"}
	}
	if azp != v.cfg.Audience {
		return &Refusal{Kind: ErrInvalid, Reason: "authorized for another party (azp is not identity_server.oidc.audience)"}
	}
	return nil
}

// checkNotAccessToken refuses an access token of the same provider presented as an ID token:
// one typed at+jwt (RFC 9068 section 2.1, "application/" prefix or not, any case), or carrying
// Keycloak's typ claim "Bearer" (its ID tokens say "ID"). An access token travels to resource
// servers (APIs), and may list the client among its audiences and as azp: any API the app
// calls with it could otherwise replay it here for the user's private identity.
func checkNotAccessToken(headerTyp string, claims map[string]json.RawMessage) *Refusal {
	if t := strings.ToLower(headerTyp); t == "at+jwt" || t == "application/at+jwt" {
		return &Refusal{Kind: ErrInvalid, Reason: "an access token (typ at+jwt), not an ID token"}
	}
	var typ string
	if raw, ok := claims["typ"]; ok && json.Unmarshal(raw, &typ) == nil && strings.EqualFold(typ, "Bearer") {
		return &Refusal{Kind: ErrInvalid, Reason: "an access token (typ claim Bearer), not an ID token"}
	}
	return nil
}

func cmp(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// state is what the key set learnt while go-oidc verified a token (go-oidc reports key set
// errors as text only).
type state struct {
	reached     bool          // the token parsed with an accepted algorithm
	unavailable error         // the keys could not be fetched
	retryAfter  time.Duration // with unavailable: until the provider is asked again
	reason      string        // why the signature was refused
	payload     []byte        // the verified payload
	typ         string        // the typ of the protected header, if a string
}

type stateKey struct{}

// Verify checks raw (the compact JWS of an ID token) and returns who it speaks for. Every
// refusal is a *Refusal of one kind: ErrInvalid, ErrNoEmail, ErrUnverified or ErrUnavailable.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	st := &state{}
	tok, err := v.oidc.Verify(context.WithValue(ctx, stateKey{}, st), raw)
	if err != nil {
		return Identity{}, v.refusal(err, st)
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, &Refusal{Kind: ErrInvalid, Reason: "the claims are not a JSON object", Cause: err}
	}
	if r := v.checkTimes(tok, claims); r != nil {
		return Identity{}, r
	}
	if r := v.checkAuthorizedParty(tok, claims); r != nil {
		return Identity{}, r
	}
	if r := checkNotAccessToken(st.typ, claims); r != nil {
		return Identity{}, r
	}
	email, err := emailOf(claims, v.cfg.EmailClaim, v.cfg.RequireEmailVerified)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Email: email, Subject: tok.Subject}, nil
}

// refusal explains a failed verification from what the key set saw and go-oidc's error.
func (v *Verifier) refusal(err error, st *state) *Refusal {
	invalid := func(reason string) *Refusal { return &Refusal{Kind: ErrInvalid, Reason: reason, Cause: err} }
	switch {
	case st.unavailable != nil:
		return &Refusal{Kind: ErrUnavailable, Reason: "the identity provider's keys cannot be fetched", Cause: st.unavailable, RetryAfter: st.retryAfter}
	case !st.reached:
		return invalid("malformed, or signed with an algorithm not accepted (identity_server.oidc.algorithms)")
	case st.payload == nil:
		return invalid(st.reason)
	}
	var c struct {
		Issuer   string          `json:"iss"`
		Audience json.RawMessage `json:"aud"`
	}
	if json.Unmarshal(st.payload, &c) != nil {
		return invalid("the claims are not valid")
	}
	if c.Issuer != v.cfg.Issuer {
		return invalid("issued by another issuer")
	}
	var one string
	var many []string
	if (json.Unmarshal(c.Audience, &one) == nil && one == v.cfg.Audience) ||
		(json.Unmarshal(c.Audience, &many) == nil && slices.Contains(many, v.cfg.Audience)) {
		if r := notNumbers(st.payload); r != "" {
			return invalid(r)
		}
		return invalid("not valid yet, or claims of the wrong type")
	}
	return invalid("minted for another audience")
}
