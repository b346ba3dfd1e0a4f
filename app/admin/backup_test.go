package admin_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/store"
)

// grow adds n KiB of sealed identity data to the store, in batches of 256 KiB.
func grow(t *testing.T, env *apptest.Env, appID []byte, prefix string, n int) {
	t.Helper()
	blob := strings.Repeat("x", 4096)
	for b := 0; b < n/256; b++ {
		emails := make([]string, 64)
		for i := range emails {
			emails[i] = fmt.Sprintf("%s-%d-%d@example.com", prefix, b, i)
		}
		_, err := env.Store.UpdateRecords(appID, emails, func(_ int, r *store.Record, _ bool) (bool, error) {
			r.UserID, r.PermanentIdentity = "u", blob
			return true, nil
		})
		require.NoError(t, err)
	}
}

// listen serves the admin API on a real loopback socket (a slow reader needs real TCP).
func listen(t *testing.T, env *apptest.Env, writeTimeout time.Duration) string {
	app := env.Server(func(d *server.Deps) {
		d.Server.WriteTimeout = writeTimeout
		d.Admin = admin.New(env.Apps, env.Store, token, admin.Options{})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(time.Second) })
	return ln.Addr().String()
}

// startBackup sends GET /admin/backup on a connection with a small receive buffer and returns
// the response (its body not read yet).
func startBackup(t *testing.T, addr string) (*http.Response, net.Conn) {
	// A small receive buffer set before connecting (set after, it can stall the window).
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "GET /admin/backup HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	require.NoError(t, err)
	return resp, conn
}

// A client that starts a backup and stops reading must not stall writers: the data file grows
// past its mapping while the client sleeps, and every write still completes promptly.
func TestBackupToAStalledClientDoesNotBlockWrites(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	c := env.CreateApp(t, true)
	grow(t, env, c.App.ID, "before", 8<<10)
	addr := listen(t, env, 30*time.Second)

	resp, _ := startBackup(t, addr)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.CopyN(io.Discard, resp.Body, 64<<10) // then stall

	done := make(chan struct{})
	go func() { defer close(done); grow(t, env, c.App.ID, "during", 12<<10) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writes made no progress while a backup client was stalled")
	}
	require.NoError(t, err)

	// The stalled client still gets the whole copy, as it was when the backup started.
	out := filepath.Join(t.TempDir(), "b.db")
	f, err := os.Create(out)
	require.NoError(t, err)
	n, err := io.Copy(f, resp.Body)
	require.NoError(t, err, "the whole body arrives")
	require.NoError(t, f.Close())
	require.Equal(t, resp.ContentLength-64<<10, n)
	<-done
}

// A backup slower than server.write_timeout is not cut off after its 200: a client that keeps
// reading gets every byte of a verified copy, with its announced length.
func TestSlowBackupOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	c := env.CreateApp(t, true)
	grow(t, env, c.App.ID, "data", 8<<10)
	addr := listen(t, env, time.Second)

	resp, _ := startBackup(t, addr)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Positive(t, resp.ContentLength, "the length is announced")
	out := filepath.Join(t.TempDir(), "b.db")
	f, err := os.Create(out)
	require.NoError(t, err)
	var total int64
	start := time.Now()
	for i := 0; i < 10000; i++ { // bounded; about 2.5 s in all
		n, err := io.CopyN(f, resp.Body, 512<<10)
		total += n
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "body cut off after %d bytes", total)
		time.Sleep(100 * time.Millisecond)
	}
	require.Greater(t, time.Since(start), 2*time.Second, "the download took longer than write_timeout")
	require.NoError(t, f.Close())
	require.Equal(t, resp.ContentLength, total)
	require.NoError(t, store.VerifyFile(out))
	entries, err := os.ReadDir(filepath.Dir(env.Store.Path()))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), ".idvault-snapshot-"), "snapshot removed after the response: %s", e.Name())
	}
}
