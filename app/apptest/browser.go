package apptest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

// ChromiumPath is Debian's chromium unless IDVAULT_CHROMIUM names another.
func ChromiumPath() string {
	if p := os.Getenv("IDVAULT_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// Browser starts headless Chromium with a fresh profile and returns its chromedp context,
// closed when the test ends. It skips the test when Chromium is missing, unless
// IDVAULT_REQUIRE_EXTERNAL=1 (as `make test` sets, after installing it).
func Browser(t *testing.T) context.Context {
	t.Helper()
	external.Short(t, "chromium")
	path := ChromiumPath()
	if _, err := os.Stat(path); err != nil {
		external.Missing(t, fmt.Sprintf("chromium not found at %s: the browser tests need it (make deps installs Debian's chromium; or set IDVAULT_CHROMIUM)", path))
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "start chromium")
	return ctx
}
