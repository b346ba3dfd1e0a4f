package idtokentest

import (
	_ "embed"
	"fmt"
	"strconv"
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// ProviderVersion is the npm oidc-provider release provider.mjs runs (.ci/install-oidc).
const ProviderVersion = "9.13.3"

//go:embed provider.mjs
var providerScript []byte

// Provider is a running oidc-provider: a real OpenID provider with a login page (any login,
// any password; "alice" is alice@example.com, a login starting with "unverified" has
// email_verified false, one starting with "noemail" no email), one public client, authorization
// code with PKCE, and the email in the ID token.
type Provider struct {
	*Issuer
	// ClientID is the client's ID (the audience of its ID tokens).
	ClientID string
}

// StartProvider starts oidc-provider on port (0: a free one) for clientID, whose redirect
// URIs are redirects, signing with the key kept in keysFile (made when missing): started
// again on the same port with the same file, it is the same provider. It skips the test
// without node, jose or oidc-provider, or fails it when IDVAULT_REQUIRE_EXTERNAL=1.
func StartProvider(tb testing.TB, port int, clientID, keysFile string, redirects ...string) *Provider {
	tb.Helper()
	node := external.NodeModules(tb, Dir(), fmt.Sprintf(".ci/install-oidc, or npm install --prefix %s jose@%s oidc-provider@%s",
		Dir(), JoseVersion, ProviderVersion), "jose", "oidc-provider")
	args := append([]string{strconv.Itoa(port), clientID, keysFile}, redirects...)
	return &Provider{Issuer: startNode(tb, node, "provider.mjs", providerScript, args...), ClientID: clientID}
}

// Output is what the provider wrote so far (its warnings and errors), for failure messages.
func (p *Provider) Output() string { return p.out.String() }
