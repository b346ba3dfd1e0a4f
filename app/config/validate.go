package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// Validate returns every problem in the configuration, each naming its key.
func (c Config) Validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}

	host, _, err := net.SplitHostPort(c.Server.Listen)
	if err != nil {
		bad("server.listen", "want host:port, got %q", c.Server.Listen)
	}
	for key, d := range map[string]int64{
		"server.read_timeout": int64(c.Server.ReadTimeout), "server.write_timeout": int64(c.Server.WriteTimeout),
		"server.idle_timeout": int64(c.Server.IdleTimeout), "server.shutdown_timeout": int64(c.Server.ShutdownTimeout),
		"store.lock_timeout": int64(c.Store.LockTimeout),
	} {
		if d <= 0 {
			bad(key, "must be a positive duration such as 10s")
		}
	}
	if c.Server.BodyLimit < 1024 {
		bad("server.body_limit", "must be at least 1024 bytes")
	}
	for i, p := range c.Server.TrustedProxies {
		if _, err := ParseProxy(p); err != nil {
			bad(fmt.Sprintf("server.trusted_proxies[%d]", i), "%q is not an IP address or CIDR", p)
		}
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "want debug, info, warn or error, got %q", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		bad("log.format", "want text or json, got %q", c.Log.Format)
	}
	if strings.TrimSpace(c.Store.Path) == "" {
		bad("store.path", "must not be empty")
	}
	if strings.TrimSpace(c.Store.KeyFile) == "" {
		bad("store.key_file", "must not be empty")
	}
	if c.Admin.Token != "" && len(c.Admin.Token) < 16 {
		bad("admin.token", "must be at least 16 characters")
	}

	remote := err == nil && !IsLoopback(host)
	if c.FakeAuth.MaxEmails < 1 || c.FakeAuth.MaxEmails > 10000 {
		bad("fakeauth.max_emails", "must be between 1 and 10000")
	}
	if c.FakeAuth.Enabled && remote && !c.FakeAuth.AllowRemote {
		bad("fakeauth.enabled", "fake authentication hands out identities without authentication; it refuses a non-loopback server.listen (%s) unless fakeauth.allow_remote is true", c.Server.Listen)
	}
	if c.IdentityServer.Enabled {
		if id, err := decodeB64(c.IdentityServer.AppID); err != nil || len(id) != 32 {
			bad("identity_server.app_id", "must be the base64 of a 32-byte app ID")
		}
		if remote && c.IdentityServer.Token == "" && !c.IdentityServer.AllowUnauthenticated {
			bad("identity_server.token", "required when server.listen is not loopback (or set identity_server.allow_unauthenticated: true)")
		}
	}
	if c.IdentityServer.Token != "" && len(c.IdentityServer.Token) < 16 {
		bad("identity_server.token", "must be at least 16 characters")
	}
	errs = append(errs, c.Verification.validate()...)
	errs = append(errs, c.Exit.validate()...)
	if c.Verification.Enabled {
		errs = append(errs, splitJoined(c.Mail.Validate())...)
	}
	for i, a := range c.Apps {
		key := fmt.Sprintf("apps[%d]", i)
		if strings.TrimSpace(a.Name) == "" {
			bad(key+".name", "must not be empty")
		}
		if s, err := decodeB64(a.Secret); err != nil || len(s) != 64 {
			bad(key+".secret", "must be the base64 of a 64-byte app secret")
		}
		switch {
		case a.AuthToken != "" && a.AuthTokenSHA256 != "":
			bad(key+".auth_token", "set auth_token or auth_token_sha256, not both")
		case a.AuthToken != "" && len(a.AuthToken) < 16:
			bad(key+".auth_token", "must be at least 16 characters")
		case a.AuthTokenSHA256 != "":
			if h, err := hex.DecodeString(a.AuthTokenSHA256); err != nil || len(h) != 32 {
				bad(key+".auth_token_sha256", "must be 64 hex digits")
			}
		case a.AuthToken == "":
			bad(key+".auth_token", "set auth_token or auth_token_sha256")
		}
	}
	return errs
}

func (v Verification) validate() []error {
	var errs []error
	bad := func(key, msg string) { errs = append(errs, fmt.Errorf("verification.%s: %s", key, msg)) }
	if v.CodeTTL <= 0 {
		bad("code_ttl", "must be a positive duration")
	}
	if v.MaxWrongAttempts < 1 {
		bad("max_wrong_attempts", "must be at least 1")
	}
	if v.LockDuration <= 0 {
		bad("lock_duration", "must be a positive duration")
	}
	if v.AddressSendLimit < 1 || v.AddressSendWindow <= 0 {
		bad("address_send_limit", "address_send_limit must be at least 1 and address_send_window positive")
	}
	if v.AppSendLimit < 1 || v.AppSendWindow <= 0 {
		bad("app_send_limit", "app_send_limit must be at least 1 and app_send_window positive")
	}
	if v.IPRate <= 0 || v.IPBurst < 1 {
		bad("ip_rate", "ip_rate must be positive and ip_burst at least 1")
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

// IsLoopback reports whether a listen host only accepts local connections.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
