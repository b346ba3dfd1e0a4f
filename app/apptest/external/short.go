package external

import "testing"

// Short skips the test under `go test -short`, before it starts what names: no external
// program (PostgreSQL, MailDev, node, Chromium, age, mount, ...) and no idvault binary runs
// under -short. Every harness that starts one calls it first.
func Short(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: does not start " + what)
	}
}
