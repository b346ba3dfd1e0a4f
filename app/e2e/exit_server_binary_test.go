package e2e_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
)

// startExitBinary runs the real `idvault exit` over the dump's database, listening at url
// (http://127.0.0.1:PORT), and waits until it answers: the process whose memory the
// benchmarks read.
func startExitBinary(t testing.TB, l *exitpgtest.Loaded, url string) *apptest.Proc {
	t.Helper()
	return apptest.StartBinary(t, "", []string{"IDVAULT_EXIT__TOKEN=" + exitpgtest.Token}, url, "exit", "--db", l.DSN,
		"--app-id", base64.StdEncoding.EncodeToString(l.AppID), "--listen", strings.TrimPrefix(url, "http://"), "--log-level", "warn")
}
