package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// TestOtherPortPageCannotFetchBackupsInBrowser: on the real binary in Chromium, a page served
// from another port of the same host (same-site: the SameSite=Strict session cookie goes with
// its requests) that loads /console/backup as an image is refused (403: the cookie was seen,
// or it would be a redirect to sign in; no snapshot written). Before, each load was a backup.
func TestOtherPortPageCannotFetchBackupsInBrowser(t *testing.T) {
	t.Parallel()
	ctx := apptest.Browser(t)
	dir := t.TempDir()
	p := apptest.Start(t, dir, apptest.DataEnv(t, dir))
	do(t, ctx, chromedp.Navigate(p.URL+"/console/login"))
	_, err := chromedp.RunResponse(ctx, chromedp.SendKeys(chromedp.ID("token"), p.AdminToken(t)+kb.Enter))
	require.NoError(t, err)
	require.Equal(t, p.URL+"/console/apps", run(t, ctx, chromedp.Location()))

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><img src="%s/console/backup"><img src="%s/console/backup?2">`, p.URL, p.URL)
	}))
	t.Cleanup(other.Close)
	require.True(t, strings.HasPrefix(other.URL, "http://127.0.0.1:"), "same host as the server, another port")
	do(t, ctx, chromedp.Navigate(other.URL))

	var log string
	for range 200 { // the request log line follows the answer
		if log = p.Stderr.String(); strings.Count(log, "route=/console/backup") >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, 2, strings.Count(log, "route=/console/backup status=403"), "refused, with the cookie (not sent to sign in); log:\n%s", log)
	require.NotContains(t, log, "route=/console/backup status=200")
}
