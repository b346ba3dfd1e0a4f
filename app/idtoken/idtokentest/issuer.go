// Package idtokentest starts real OpenID providers for tests, in node, on loopback ports (npm
// packages installed by .ci/install-oidc, which `make test` runs). Start runs issuer.mjs, a
// small provider on npm's jose: it publishes discovery and a key set (RS256 and ES256), rotates
// keys, sets the key set's cache headers, counts the fetches of its key set, and mints ID
// tokens, valid or broken in every way a verifier must refuse. StartProvider runs
// provider.mjs, oidc-provider with a login page, for a browser signing in with the
// authorization code and PKCE (provider.go).
package idtokentest

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest/external"
)

// JoseVersion is the npm jose release issuer.mjs is written against (.ci/install-oidc).
const JoseVersion = "6.2.18"

// EnvDir, read by Start, names the npm prefix jose was installed into.
const EnvDir = "IDVAULT_OIDC_DIR"

//go:embed issuer.mjs
var script []byte

// Dir is the npm prefix jose is expected under: $IDVAULT_OIDC_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/idvault/oidc.
func Dir() string { return external.CacheDir(EnvDir, "oidc") }

// Issuer is a running provider.
type Issuer struct {
	// URL is its issuer URL (http://127.0.0.1:PORT), as its tokens name it.
	URL  string
	Port int

	cmd    *exec.Cmd
	exited chan struct{}
	out    *external.Output // the provider's output, for failure messages
	client *http.Client
	once   sync.Once
}

// Start starts a provider on a free loopback port (port 0) or on port, and stops it when the
// test ends. Without node or jose it skips the test, or fails it when IDVAULT_REQUIRE_EXTERNAL=1.
func Start(tb testing.TB, port int) *Issuer {
	tb.Helper()
	node := external.NodeModules(tb, Dir(), fmt.Sprintf(".ci/install-oidc, or npm install --prefix %s jose@%s", Dir(), JoseVersion), "jose")
	return startNode(tb, node, "issuer.mjs", script, strconv.Itoa(port))
}

// startNode runs the script in node with args, and waits for its first line of output,
// {"port": N}. It is killed when the test ends.
func startNode(tb testing.TB, node, name string, script []byte, args ...string) *Issuer {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, script, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{path}, args...)...)
	cmd.Env = append(os.Environ(), EnvDir+"="+Dir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out := &external.Output{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("idtokentest: start node: %v", err)
	}
	iss := &Issuer{cmd: cmd, exited: make(chan struct{}), out: out, client: &http.Client{Timeout: 10 * time.Second}}
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(out, r)
	}()
	go func() { _ = cmd.Wait(); close(iss.exited) }()
	tb.Cleanup(iss.Stop)
	select {
	case line := <-first:
		var hello struct{ Port int }
		if err := json.Unmarshal([]byte(line), &hello); err != nil || hello.Port == 0 {
			<-iss.exited
			tb.Fatalf("idtokentest: %s did not start (%q): %s", name, line, out.String())
		}
		iss.Port, iss.URL = hello.Port, "http://127.0.0.1:"+strconv.Itoa(hello.Port)
	case <-time.After(30 * time.Second):
		iss.Stop()
		tb.Fatalf("idtokentest: %s did not start within 30 s: %s", name, out.String())
	}
	return iss
}

// Stop kills the provider (the port then refuses connections: a dead issuer).
func (i *Issuer) Stop() {
	i.once.Do(func() {
		_ = i.cmd.Process.Signal(syscall.SIGKILL)
		<-i.exited
	})
}

// Token describes an ID token to mint. Claims override the defaults (iss: the issuer, iat:
// now, exp: in 5 minutes); a nil value removes a claim.
type Token struct {
	Claims map[string]any `json:"claims"`
	// Alg is RS256 (default) or ES256.
	Alg string `json:"alg,omitempty"`
	// Kid overrides the kid of the header ("-": no kid).
	Kid string `json:"kid,omitempty"`
	// Typ overrides the typ of the header (default JWT; with Sign "key" only).
	Typ string `json:"typ,omitempty"`
	// Sign: "key" (default: the current key of Alg), "foreign" (a key the provider does not
	// publish, under Kid or the current kid), "none" (alg none), "hs256-public" (HS256 keyed
	// with the RSA public key).
	Sign string `json:"sign,omitempty"`
}

// Mint returns a token.
func (i *Issuer) Mint(tb testing.TB, t Token) string {
	tb.Helper()
	var out struct{ Token string }
	i.call(tb, http.MethodPost, "/mint", t, &out)
	return out.Token
}

// IDToken is a valid token for aud and email (email_verified true).
func (i *Issuer) IDToken(tb testing.TB, alg, aud, email string) string {
	tb.Helper()
	return i.Mint(tb, Token{Alg: alg, Claims: map[string]any{"aud": aud, "sub": "sub-" + email, "email": email, "email_verified": true}})
}

// Rotate makes a new current key for alg, dropping the old ones unless keepOld, and returns
// its kid.
func (i *Issuer) Rotate(tb testing.TB, alg string, keepOld bool) string {
	tb.Helper()
	var out struct{ Kid string }
	i.call(tb, http.MethodPost, "/rotate", map[string]any{"alg": alg, "keep_old": keepOld}, &out)
	return out.Kid
}

// KeySetHeaders sets the headers of the key set's answers from now on (Cache-Control, Age...),
// over the default Cache-Control: no-store.
func (i *Issuer) KeySetHeaders(tb testing.TB, headers map[string]string) {
	tb.Helper()
	var out struct{}
	i.call(tb, http.MethodPost, "/jwks_headers", map[string]any{"headers": headers}, &out)
}

// Fetches returns how many times the key set (and the discovery document) were fetched.
func (i *Issuer) Fetches(tb testing.TB) (jwks, discovery int) {
	tb.Helper()
	var out struct{ JWKS, Discovery int }
	i.call(tb, http.MethodGet, "/stats", nil, &out)
	return out.JWKS, out.Discovery
}

func (i *Issuer) call(tb testing.TB, method, path string, in, out any) {
	tb.Helper()
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			tb.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, i.URL+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := i.client.Do(req)
	if err != nil {
		tb.Fatalf("idtokentest: %s %s: %v (provider output: %s)", method, path, err, i.out.String())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("idtokentest: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		tb.Fatalf("idtokentest: %s %s: %v", method, path, err)
	}
}
