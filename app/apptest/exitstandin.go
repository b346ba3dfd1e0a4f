package apptest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// StandInExit is a stand-in exit server for client tests, closed when the test ends: GET /readyz
// answers ready (what a client's probe asks first), decrypt handles POST /v1/decrypt and
// identities PUT /v1/identities (nil: 404).
func StandInExit(t testing.TB, decrypt, identities http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"status": "ready", "checks": {"database": "ok"}}`)
	})
	if decrypt != nil {
		mux.HandleFunc("POST /v1/decrypt", decrypt)
	}
	if identities != nil {
		mux.HandleFunc("PUT /v1/identities", identities)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// EchoDecrypt answers a decrypt with the body itself: a file "decrypts" to its own bytes.
func EchoDecrypt(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, r.Body)
}
