package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A backup the server refuses (its disk is full) reports the server's reason, not only "500".
func TestBackupDownloadReportsServerReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"status":500,"code":"internal_error","message":"internal error: the server's disk is full, nothing was stored; retry once its operator frees space","trace_id":"x"}}`))
	}))
	defer srv.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := &remoteBackend{base: srv.URL, token: "t", client: srv.Client()}
	err = b.download(context.Background(), "/admin/backup", f)
	if err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("download error = %v, want the server's reason (disk is full)", err)
	}
}
