package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/mail/mailtest"
)

// A hanging SMTP server delays neither start-up nor /readyz, and /readyz shows a short cause.
func TestHangingSMTPServerDoesNotDelayStartOrReadiness(t *testing.T) {
	t.Parallel()
	smtp := mailtest.Start(t, mailtest.Options{})
	smtp.SetFault(mailtest.Fault{At: mailtest.AtConnect, Action: mailtest.Stall})
	dir := t.TempDir()
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- cli.Run(ctx, []string{"serve"}, &out, &errb, cli.Env{
			Embedded: clitest.Embedded(t), Ready: func(addr string) { ready <- addr },
			Environ: []string{
				"IDVAULT_STORE__PATH=" + filepath.Join(dir, "idvault.db"),
				"IDVAULT_STORE__KEY_FILE=" + filepath.Join(dir, "master.key"),
				"IDVAULT_SERVER__LISTEN=127.0.0.1:0",
				fmt.Sprintf("IDVAULT_MAIL__PORT=%d", smtp.Port()),
				"IDVAULT_MAIL__TIMEOUT=15s",
			},
		})
	}()
	var addr string
	select {
	case addr = <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not start within 5 s behind a hanging SMTP server")
	}
	defer func() { cancel(); <-done }()

	for i := 0; i < 2; i++ {
		t0 := time.Now()
		resp, err := http.Get("http://" + addr + "/readyz")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Less(t, time.Since(t0), 2*time.Second, "/readyz answers at once")
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.True(t, strings.Contains(string(body), `"smtp":"checking"`) || strings.Contains(string(body), `"smtp":"failed: timeout"`), "%s", body)
	}
}
