package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// identity_server.oidc and cors_origins: start refuses each bad value with the key named, and
// accepts the good ones.
func TestIdentityServerOIDCValidation(t *testing.T) {
	t.Parallel()
	valid := func(c *IdentityServer) {
		c.Enabled, c.AppID, c.Token = true, strings.Repeat("A", 43)+"=", "a-token-of-16-chars!"
		c.OIDC.Issuer, c.OIDC.Audience = "https://auth.example.com/realms/demo", "web-client"
	}
	for name, tc := range map[string]struct {
		change func(c *IdentityServer)
		key    string // "" when accepted
	}{
		"https issuer with audience":   {func(c *IdentityServer) {}, ""},
		"http issuer on 127.0.0.1":     {func(c *IdentityServer) { c.OIDC.Issuer = "http://127.0.0.1:9000" }, ""},
		"http issuer on localhost":     {func(c *IdentityServer) { c.OIDC.Issuer = "http://localhost:9000/realms/x" }, ""},
		"http issuer on ::1":           {func(c *IdentityServer) { c.OIDC.Issuer = "http://[::1]:9000" }, ""},
		"issuer without audience":      {func(c *IdentityServer) { c.OIDC.Audience = "" }, "identity_server.oidc.audience"},
		"http issuer off loopback":     {func(c *IdentityServer) { c.OIDC.Issuer = "http://auth.example.com" }, "identity_server.oidc.issuer"},
		"http issuer on a LAN address": {func(c *IdentityServer) { c.OIDC.Issuer = "http://192.168.1.10" }, "identity_server.oidc.issuer"},
		"issuer not a URL":             {func(c *IdentityServer) { c.OIDC.Issuer = "auth.example.com" }, "identity_server.oidc.issuer"},
		"issuer with a query":          {func(c *IdentityServer) { c.OIDC.Issuer = "https://auth.example.com/?x=1" }, "identity_server.oidc.issuer"},
		"algorithm none":               {func(c *IdentityServer) { c.OIDC.Algorithms = []string{"RS256", "none"} }, "identity_server.oidc.algorithms[1]"},
		"algorithm HS256":              {func(c *IdentityServer) { c.OIDC.Algorithms = []string{"HS256"} }, "identity_server.oidc.algorithms[0]"},
		"algorithm ES512":              {func(c *IdentityServer) { c.OIDC.Algorithms = []string{"ES512"} }, "identity_server.oidc.algorithms[0]"},
		"no algorithm":                 {func(c *IdentityServer) { c.OIDC.Algorithms = nil }, "identity_server.oidc.algorithms"},
		"every asymmetric algorithm":   {func(c *IdentityServer) { c.OIDC.Algorithms = OIDCAlgorithms }, ""},
		"empty email claim":            {func(c *IdentityServer) { c.OIDC.EmailClaim = " " }, "identity_server.oidc.email_claim"},
		"clock skew too large":         {func(c *IdentityServer) { c.OIDC.ClockSkew = time.Hour }, "identity_server.oidc.clock_skew"},
		"negative new identities":      {func(c *IdentityServer) { c.OIDC.NewIdentitiesPerUser = -1 }, "identity_server.oidc.new_identities_per_user"},
		"no bound on new identities":   {func(c *IdentityServer) { c.OIDC.NewIdentitiesPerUser = 0 }, ""},
		"new identities window of 0":   {func(c *IdentityServer) { c.OIDC.NewIdentitiesWindow = 0 }, "identity_server.oidc.new_identities_window"},
		"keys min age of 0":            {func(c *IdentityServer) { c.OIDC.KeysMinAge = 0 }, "identity_server.oidc.keys_min_age"},
		"keys max age over a day":      {func(c *IdentityServer) { c.OIDC.KeysMaxAge = 25 * time.Hour }, "identity_server.oidc.keys_max_age"},
		"keys min age over max age":    {func(c *IdentityServer) { c.OIDC.KeysMinAge, c.OIDC.KeysMaxAge = 10*time.Minute, 5*time.Minute }, "identity_server.oidc.keys_min_age"},
		"keys ages equal":              {func(c *IdentityServer) { c.OIDC.KeysMinAge, c.OIDC.KeysMaxAge = 5*time.Minute, 5*time.Minute }, ""},
		// Bounds hold with OIDC off too, as verification's do with verification off: config check
		// finds a value out of range before an issuer (often an environment variable) turns it on.
		"clock skew too large, OIDC off": {func(c *IdentityServer) { c.OIDC.Issuer, c.OIDC.ClockSkew = "", time.Hour }, "identity_server.oidc.clock_skew"},
		"window of 0, OIDC off":          {func(c *IdentityServer) { c.OIDC.Issuer, c.OIDC.NewIdentitiesWindow = "", 0 }, "identity_server.oidc.new_identities_window"},
		"negative new identities, off":   {func(c *IdentityServer) { c.OIDC.Issuer, c.OIDC.NewIdentitiesPerUser = "", -1 }, "identity_server.oidc.new_identities_per_user"},
		"origin with a port":             {func(c *IdentityServer) { c.CORSOrigins = []string{"http://localhost:3000", "https://app.example.com"} }, ""},
		"origin *":                       {func(c *IdentityServer) { c.CORSOrigins = []string{"*"} }, "identity_server.cors_origins[0]"},
		"origin with a path":             {func(c *IdentityServer) { c.CORSOrigins = []string{"https://app.example.com/"} }, "identity_server.cors_origins[0]"},
		"origin without scheme":          {func(c *IdentityServer) { c.CORSOrigins = []string{"app.example.com"} }, "identity_server.cors_origins[0]"},
		"origin with a wildcard":         {func(c *IdentityServer) { c.CORSOrigins = []string{"https://*.example.com"} }, "identity_server.cors_origins[0]"},
		"origin in upper case":           {func(c *IdentityServer) { c.CORSOrigins = []string{"https://App.example.com"} }, "identity_server.cors_origins[0]"},
		"origin of another scheme":       {func(c *IdentityServer) { c.CORSOrigins = []string{"ftp://app.example.com"} }, "identity_server.cors_origins[0]"},
		// Origins a browser never sends (it drops the default port, writes addresses canonically):
		// the grant compares bytes, so these used to be accepted and never match.
		"origin with the default https port": {func(c *IdentityServer) { c.CORSOrigins = []string{"https://app.example.com:443"} }, "identity_server.cors_origins[0]"},
		"origin with the default http port":  {func(c *IdentityServer) { c.CORSOrigins = []string{"http://[::1]:80"} }, "identity_server.cors_origins[0]"},
		"origin with an empty port":          {func(c *IdentityServer) { c.CORSOrigins = []string{"https://app.example.com:"} }, "identity_server.cors_origins[0]"},
		"origin port with a leading zero":    {func(c *IdentityServer) { c.CORSOrigins = []string{"http://localhost:03000"} }, "identity_server.cors_origins[0]"},
		"origin short IPv4":                  {func(c *IdentityServer) { c.CORSOrigins = []string{"http://127.1:3000"} }, "identity_server.cors_origins[0]"},
		"origin uncompressed IPv6":           {func(c *IdentityServer) { c.CORSOrigins = []string{"http://[0:0::1]:3000"} }, "identity_server.cors_origins[0]"},
		"origin IPv4-mapped, dotted":         {func(c *IdentityServer) { c.CORSOrigins = []string{"http://[::ffff:127.0.0.1]:3000"} }, "identity_server.cors_origins[0]"},
		"origins as browsers send them": {func(c *IdentityServer) {
			c.CORSOrigins = []string{"http://127.0.0.1:3000", "http://[::1]:3000", "http://[::ffff:7f00:1]:3000", "https://app.example.com:8443", "https://1e100.net"}
		}, ""},
		"origins without OIDC": {func(c *IdentityServer) {
			c.OIDC.Issuer, c.CORSOrigins = "", []string{"https://app.example.com"}
		}, "identity_server.cors_origins"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := Default()
			cfg.Verification.Enabled = false // its mail settings are not the point here
			valid(&cfg.IdentityServer)
			tc.change(&cfg.IdentityServer)
			var msgs []string
			for _, err := range cfg.Validate() {
				msgs = append(msgs, err.Error())
			}
			joined := strings.Join(msgs, "\n")
			if tc.key == "" {
				require.Empty(t, msgs)
				return
			}
			require.Contains(t, joined, tc.key+":")
		})
	}
}

// The environment spelling of every new key, as for any other key.
func TestIdentityServerOIDCFromEnvironment(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{Environ: []string{
		"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=https://auth.example.com",
		"IDVAULT_IDENTITY_SERVER__OIDC__AUDIENCE=web",
		"IDVAULT_IDENTITY_SERVER__OIDC__EMAIL_CLAIM=upn",
		"IDVAULT_IDENTITY_SERVER__OIDC__REQUIRE_EMAIL_VERIFIED=false",
		"IDVAULT_IDENTITY_SERVER__OIDC__ALGORITHMS=ES256,EdDSA",
		"IDVAULT_IDENTITY_SERVER__OIDC__CLOCK_SKEW=30s",
		"IDVAULT_IDENTITY_SERVER__OIDC__NEW_IDENTITIES_PER_USER=50",
		"IDVAULT_IDENTITY_SERVER__OIDC__NEW_IDENTITIES_WINDOW=1h",
		"IDVAULT_IDENTITY_SERVER__OIDC__KEYS_MIN_AGE=30s",
		"IDVAULT_IDENTITY_SERVER__OIDC__KEYS_MAX_AGE=5m",
		"IDVAULT_IDENTITY_SERVER__CORS_ORIGINS=https://a.example.com,http://localhost:3000",
	}})
	require.NoError(t, err)
	require.Empty(t, l.Problems)
	require.Equal(t, OIDC{Issuer: "https://auth.example.com", Audience: "web", EmailClaim: "upn", RequireEmailVerified: false,
		Algorithms: []string{"ES256", "EdDSA"}, ClockSkew: 30 * time.Second, NewIdentitiesPerUser: 50, NewIdentitiesWindow: time.Hour,
		KeysMinAge: 30 * time.Second, KeysMaxAge: 5 * time.Minute}, l.Config.IdentityServer.OIDC)
	require.Equal(t, []string{"https://a.example.com", "http://localhost:3000"}, l.Config.IdentityServer.CORSOrigins)

	l, err = Load(Sources{})
	require.NoError(t, err)
	require.False(t, l.Config.IdentityServer.OIDC.On(), "OIDC is off by default")
	require.Equal(t, []string{"RS256", "ES256"}, l.Config.IdentityServer.OIDC.Algorithms)
	require.True(t, l.Config.IdentityServer.OIDC.RequireEmailVerified)
}
