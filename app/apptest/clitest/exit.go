package clitest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
)

// ExitWithOneUser serves an exit server over an in-memory key database holding one user,
// whose identity is imported; it returns the database, the user's identity and the URL.
func ExitWithOneUser(t testing.TB) (*exitfake.DB, string, string) {
	t.Helper()
	db := exitfake.New()
	who, _ := db.AddUser()
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{}))
	_, err := exitclient.New(url, "").Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	return db, who, url
}

// WriteFiles writes n small files f00.bin, f01.bin, ... into dir.
func WriteFiles(t testing.TB, dir string, n int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.bin", i)), []byte(fmt.Sprintf("file %d", i)), 0o600))
	}
}

// OneLine requires s to be exactly one line.
func OneLine(t testing.TB, s string) {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, "\n"), "one message: %q", s)
	require.True(t, strings.HasSuffix(s, "\n"), "%q", s)
}

// Hanging is a stand-in exit server whose decrypt hangs; Hung is closed once it does.
type Hanging struct {
	*httptest.Server
	Hung chan struct{}
}

// HangingDecrypt answers the first ok decrypts whole, then starts the next answer and waits
// for the client to go away.
func HangingDecrypt(t testing.TB, ok int32) Hanging {
	var n atomic.Int32
	hung := make(chan struct{})
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // (echo reads it itself)
		switch k := n.Add(1); {
		case k <= ok:
			_, _ = w.Write([]byte("clear"))
		case k == ok+1:
			_, _ = w.Write(make([]byte, 4096))
			w.(http.Flusher).Flush()
			close(hung)
			<-r.Context().Done()
		default:
			<-r.Context().Done()
		}
	}, nil)
	return Hanging{srv, hung}
}

// CancelWhenPart calls cancel once the hanging answer has started and its part file exists.
func CancelWhenPart(out string, hung chan struct{}, cancel func()) {
	<-hung
	for range 2000 {
		if parts, _ := filepath.Glob(filepath.Join(out, "*"+outfiles.PartSuffix)); len(parts) > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
}

// RequireInterrupted requires a decrypt of the 6 files of WriteFiles, interrupted after 2 of
// them (HangingDecrypt(t, 2)): exit code 130, one line saying so, the files done and no part
// file in out.
func RequireInterrupted(t testing.TB, out, stdout, errOut string, code int) {
	t.Helper()
	require.Equal(t, 130, code, "%s %s", stdout, errOut)
	OneLine(t, errOut)
	require.Contains(t, errOut, "interrupted: 6 files: 2 decrypted")
	require.Contains(t, errOut, "4 not done; rerun to continue")
	require.NotContains(t, errOut, "context")
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"f00.bin", "f01.bin"}, names, "the files done, no part file")
}
