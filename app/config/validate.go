package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idvault/idvault/app/appname"
	"github.com/idvault/idvault/app/loopback"
)

// Validate returns every problem in the configuration, each naming its key.
func (c Config) Validate() []error {
	var errs []error
	host, err := checkListen(c.Server.Listen)
	if err != nil {
		errs = append(errs, fmt.Errorf("server.listen: %v", err))
	}
	errs = append(errs, c.checkDurations()...)
	errs = append(errs, c.Server.validate()...)
	errs = append(errs, c.Log.validate()...)
	errs = append(errs, c.Store.validate()...)
	errs = append(errs, c.checkPaths()...)
	errs = append(errs, c.Admin.validate()...)

	remote := err == nil && !loopback.IsHost(host)
	errs = append(errs, c.FakeAuth.validate(c.Server.Listen, remote)...)
	errs = append(errs, c.IdentityServer.checkAccess(remote)...)
	errs = append(errs, c.IdentityServer.validate()...)
	errs = append(errs, c.Console.validate()...)
	errs = append(errs, c.Metrics.validate(c.Server.Listen)...)
	errs = append(errs, c.Verification.validate()...)
	errs = append(errs, c.Exit.validate()...)
	if c.Verification.Enabled {
		errs = append(errs, splitJoined(c.Mail.Validate())...)
	}
	return append(errs, validateApps(c.Apps)...)
}

// validate checks the server section but for its listen address and durations, which
// Validate checks first.
func (s Server) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	switch {
	case s.BodyLimit < 1024:
		bad("server.body_limit", "must be at least 1024 bytes")
	case s.BodyLimit > MaxBodyLimit:
		// Every body is held in memory whole, by each of up to server.max_connections requests.
		bad("server.body_limit", "must be at most %d bytes (16 MiB): a request body is held in memory whole", MaxBodyLimit)
	}
	for i, p := range s.TrustedProxies {
		if _, err := ParseProxy(p); err != nil {
			bad(fmt.Sprintf("server.trusted_proxies[%d]", i), "%q is not an IP address or CIDR", p)
		}
	}
	errs = append(errs, checkHosts("server.allowed_hosts", s.AllowedHosts)...)
	return append(errs, checkConns("server", s.MaxConnections, s.MaxConnectionsPerIP)...)
}

// validate checks the log section.
func (l Log) validate() []error {
	var errs []error
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, l.Level) {
		errs = append(errs, fmt.Errorf("log.level: want debug, info, warn or error, got %q", l.Level))
	}
	if !slices.Contains([]string{"text", "json"}, l.Format) {
		errs = append(errs, fmt.Errorf("log.format: want text or json, got %q", l.Format))
	}
	return errs
}

// validate checks the store section but for its lock timeout (checkDurations) and its files
// (checkPaths).
func (s Store) validate() []error {
	var errs []error
	if strings.TrimSpace(s.Path) == "" {
		errs = append(errs, errors.New("store.path: must not be empty"))
	}
	if s.RecordCacheMiB < 0 || s.RecordCacheMiB > 65536 {
		errs = append(errs, errors.New("store.record_cache_mib: must be between 0 (off) and 65536"))
	}
	return errs
}

// validate checks the fakeauth section; remote tells whether listen, server.listen, is
// reachable from other machines.
func (f FakeAuth) validate(listen string, remote bool) []error {
	var errs []error
	if f.MaxEmails < 1 || f.MaxEmails > 10000 {
		errs = append(errs, errors.New("fakeauth.max_emails: must be between 1 and 10000"))
	}
	if f.Enabled && remote && !f.AllowRemote {
		errs = append(errs, fmt.Errorf("fakeauth.enabled: fake authentication hands out identities without authentication; it refuses a non-loopback server.listen (%s) unless fakeauth.allow_remote is true", listen))
	}
	return errs
}

// checkAccess checks the app ID and token of the identity server (validate checks the rest);
// remote tells whether server.listen is reachable from other machines, where the server
// needs a token or OIDC unless allow_unauthenticated says otherwise.
func (s IdentityServer) checkAccess(remote bool) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	if s.Enabled {
		if id, err := decodeB64(s.AppID); err != nil || len(id) != 32 {
			bad("identity_server.app_id", "must be the base64 of a 32-byte app ID")
		}
		if remote && s.Token == "" && !s.AllowUnauthenticated && !s.OIDC.On() {
			bad("identity_server.token", "required when server.listen is not loopback (or set identity_server.allow_unauthenticated: true)")
		}
	}
	if s.Token != "" {
		if err := CheckBearerToken(s.Token); err != nil {
			bad("identity_server.token", "%v", err)
		}
	}
	return errs
}

// validateApps checks the declared apps: each name, secret and auth token.
// An app declared twice (the same secret, so the same app ID) stops serve; two names equal
// but for case are refused as app create refuses them. Both are reported here, for config
// check.
func validateApps(apps []DeclaredApp) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	secrets := map[string]int{}
	for i, a := range apps {
		key := fmt.Sprintf("apps[%d]", i)
		switch {
		case strings.TrimSpace(a.Name) == "":
			bad(key+".name", "must not be empty")
		case !appname.Valid(a.Name):
			bad(key+".name", "%s (no control, format, zero-width or direction-changing character), got %s", appname.Rule, shownName(a.Name))
		case strings.TrimSpace(a.Name) != a.Name:
			// app create trims a name: " Shop" would pass for another app's "Shop".
			bad(key+".name", "must not begin or end with a space, got %q", a.Name)
		}
		for j, prev := range apps[:i] {
			if strings.TrimSpace(a.Name) != "" && strings.EqualFold(a.Name, prev.Name) {
				bad(key+".name", "%q is the name of apps[%d] (app names are compared case-insensitively)", a.Name, j)
				break
			}
		}
		if s, err := decodeB64(a.Secret); err != nil || len(s) != 64 {
			bad(key+".secret", "must be the base64 of a 64-byte app secret")
		} else if j, dup := secrets[string(s)]; dup {
			bad(key+".secret", "is the secret of apps[%d]: the same app declared twice", j)
		} else {
			secrets[string(s)] = i
		}
		if err := a.checkAuthToken(key); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// checkAuthToken checks that the app declared under key has either an auth token of at least
// 16 characters or the SHA-256 of one.
func (a DeclaredApp) checkAuthToken(key string) error {
	switch {
	case a.AuthToken != "" && a.AuthTokenSHA256 != "":
		return fmt.Errorf("%s.auth_token: set auth_token or auth_token_sha256, not both", key)
	case a.AuthToken != "" && len(a.AuthToken) < 16:
		return fmt.Errorf("%s.auth_token: must be at least 16 characters", key)
	case a.AuthTokenSHA256 != "":
		if h, err := hex.DecodeString(a.AuthTokenSHA256); err != nil || len(h) != 32 {
			return fmt.Errorf("%s.auth_token_sha256: must be 64 hex digits", key)
		}
	case a.AuthToken == "":
		return fmt.Errorf("%s.auth_token: set auth_token or auth_token_sha256", key)
	}
	return nil
}

// shownName is an app name for an error message: quoted, with what does not print escaped
// (strconv.Quote shows a zero-width space as \u200b), or its length when it is too long to show.
func shownName(name string) string {
	if n := utf8.RuneCountInString(name); n > appname.MaxChars {
		return fmt.Sprintf("%d characters", n)
	}
	return strconv.Quote(name)
}

// CheckListen checks a listen address as server.listen is checked (checkListen), for a
// command that writes one into a config file (idvault init --listen).
func CheckListen(listen string) error {
	_, err := checkListen(listen)
	return err
}

// checkListen checks a host:port listen address: the port a number from 0 to 65535 (0: any
// free port), the host empty (every interface), an IP address or a host name.
func checkListen(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("want host:port such as 127.0.0.1:8080, got %q", listen)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("the port %q is not a number from 0 to 65535", port)
	}
	if host != "" && net.ParseIP(host) == nil && !isHostName(host) {
		return "", fmt.Errorf("the host %q is neither an IP address nor a host name", host)
	}
	return host, nil
}

// isHostName accepts DNS names made of letters, digits, hyphens and dots.
func isHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

// checkHosts checks an allowed_hosts list.
func checkHosts(key string, hosts []string) []error {
	var errs []error
	for i, h := range hosts {
		name := strings.TrimPrefix(strings.Trim(h, "[]"), "*.")
		if net.ParseIP(name) == nil && !isHostName(name) {
			errs = append(errs, fmt.Errorf("%s[%d]: %q is not a host name, IP address or *.domain", key, i, h))
		}
	}
	return errs
}

// maxConnections bounds max_connections (a million connections is past any file limit).
const maxConnections = 1 << 20

// checkConns checks a section's max_connections and max_connections_per_ip.
func checkConns(section string, total, perIP int) []error {
	var errs []error
	if total < 1 || total > maxConnections {
		errs = append(errs, fmt.Errorf("%s.max_connections: must be between 1 and %d, got %d", section, maxConnections, total))
	}
	if perIP < 1 || perIP > maxConnections {
		errs = append(errs, fmt.Errorf("%s.max_connections_per_ip: must be between 1 and %d, got %d", section, maxConnections, perIP))
	}
	return errs
}

// Duration bounds: every duration key must lie within its range, so that nothing overflows
// when added to the current time (a lock of 2500000h would wrap and lock nothing).
const (
	maxTimeout = 24 * time.Hour
	maxPeriod  = 366 * 24 * time.Hour
)

// checkDurations bounds every duration of the configuration.
func (c Config) checkDurations() []error {
	return checkBounds([]bounded{
		{"server.read_timeout", c.Server.ReadTimeout, time.Millisecond, maxTimeout},
		{"server.write_timeout", c.Server.WriteTimeout, time.Millisecond, maxTimeout},
		{"server.idle_timeout", c.Server.IdleTimeout, time.Millisecond, maxTimeout},
		{"server.shutdown_timeout", c.Server.ShutdownTimeout, time.Millisecond, maxTimeout},
		{"store.lock_timeout", c.Store.LockTimeout, time.Millisecond, time.Hour},
	})
}

// bounded is a duration key with its allowed range.
type bounded struct {
	key      string
	v        time.Duration
	min, max time.Duration
}

func checkBounds(ds []bounded) []error {
	var errs []error
	for _, d := range ds {
		if d.v < d.min || d.v > d.max {
			errs = append(errs, fmt.Errorf("%s: must be between %s and %s, got %s", d.key, short(d.min), short(d.max), short(d.v)))
		}
	}
	return errs
}

// short writes a duration as time.Duration does, without its zero units: 24h for 24h0m0s, 15m
// for 15m0s, 1h30m for 1h30m0s (as config.yaml writes them: bounds in errors, and defaults in
// config check, which then print as a file's values do).
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func (v Verification) validate() []error {
	var errs []error
	bad := func(key, msg string) { errs = append(errs, fmt.Errorf("verification.%s: %s", key, msg)) }
	errs = append(errs, checkBounds([]bounded{
		{"verification.code_ttl", v.CodeTTL, time.Second, maxPeriod},
		{"verification.lock_duration", v.LockDuration, time.Second, maxPeriod},
		{"verification.address_send_window", v.AddressSendWindow, time.Second, maxPeriod},
		{"verification.app_send_window", v.AppSendWindow, time.Second, maxPeriod},
	})...)
	if v.MaxWrongAttempts < 1 {
		bad("max_wrong_attempts", "must be at least 1")
	}
	if v.AddressSendLimit < 1 {
		bad("address_send_limit", "must be at least 1")
	}
	if v.AppSendLimit < 1 {
		bad("app_send_limit", "must be at least 1")
	}
	// NaN passes "<= 0" and +Inf refills the bucket at once: either silently lifts the limit.
	if !(v.IPRate > 0) || math.IsInf(v.IPRate, 1) || v.IPBurst < 1 {
		bad("ip_rate", "ip_rate must be a positive finite number and ip_burst at least 1")
	}
	if v.IPv6Prefix < 32 || v.IPv6Prefix > 128 {
		bad("ipv6_prefix", "must be between 32 and 128 (bits of an IPv6 address that name one client)")
	}
	for i, p := range v.Placeholders {
		if len(p) < 8 || strings.ContainsAny(p, " \t\r\n<>&") {
			bad(fmt.Sprintf("placeholders[%d]", i), "must be at least 8 characters with no spaces or <>&")
		}
	}
	return errs
}

// ParseProxy parses a trusted proxy entry: an IP address or a CIDR prefix.
func ParseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// decodeB64 accepts standard or URL-safe base64, padded or not.
func decodeB64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// splitJoined turns an errors.Join result back into its parts.
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// MaxBodyLimit is the largest server.body_limit: idvault serve's bodies are JSON of a few
// kilobytes (a verification mail's html at most a few hundred), and each is held in memory whole.
const MaxBodyLimit = 16 << 20
