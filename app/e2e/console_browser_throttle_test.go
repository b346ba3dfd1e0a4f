package e2e_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// TestConsoleLockedSignInInBrowser: on the real binary (throttle set through the
// environment, admin.max_wrong_tokens=2), two wrong tokens lock the browser's address, and the
// right token then gets a readable 429 sign-in page; the admin API is locked for it too.
func TestConsoleLockedSignInInBrowser(t *testing.T) {
	t.Parallel()
	ctx := apptest.Browser(t)
	dir := t.TempDir()
	p := apptest.Start(t, dir, append(apptest.DataEnv(t, dir), "IDVAULT_ADMIN__MAX_WRONG_TOKENS=2"))
	token := p.AdminToken(t)

	signIn := func(tok string) int64 {
		t.Helper()
		do(t, ctx, chromedp.Navigate(p.URL+"/console/login"), chromedp.SendKeys(chromedp.ID("token"), tok))
		return submit(t, ctx, "form button[type=submit]").Status
	}
	require.Equal(t, int64(401), signIn("wrong-token-one"))
	require.Equal(t, int64(401), signIn("wrong-token-two"))
	require.Equal(t, int64(429), signIn(token), "locked: even the right token is refused")
	require.Contains(t, text(t, ctx, "#login-error"), "Too many wrong admin tokens were sent from your address")
	require.Contains(t, text(t, ctx, "#login-error"), "15 minutes")
	png := run(t, ctx, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(outputDir(t), "login-locked.png"), png, 0o644))

	status, body := adminGet(t, p, "/admin/apps")
	require.Equal(t, 429, status, "the admin API shares the lock")
	require.Equal(t, "admin_locked", body["error"].(map[string]any)["code"])
}
