package apptest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// StandInExit is a stand-in exit server for client tests, closed when the test ends: GET /readyz
// answers ready (what a client's probe asks first), decrypt handles POST /v1/decrypt and
// identities PUT /v1/identities (nil: 404).
func StandInExit(t testing.TB, decrypt, identities http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(standInMux(decrypt, identities))
	t.Cleanup(srv.Close)
	return srv
}

// standInMux routes StandInExit's requests.
func standInMux(decrypt, identities http.HandlerFunc) *http.ServeMux {
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
	return mux
}

// EchoDecrypt answers a decrypt with the body itself: a file "decrypts" to its own bytes.
func EchoDecrypt(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, r.Body)
}

// DyingExit is a stand-in exit server (as StandInExit, decrypt answered by EchoDecrypt) that dies
// at its n-th decrypt request: from then on every connection, on every route, is dropped
// without an answer. Its port stays held until the test ends: a server that closed its listener
// instead freed the port, which a server of a test running in parallel could take, and a
// client's retries were then answered there.
func DyingExit(t testing.TB, n int32) *httptest.Server {
	t.Helper()
	var served atomic.Int32
	var dead atomic.Bool
	mux := standInMux(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) >= n {
			dead.Store(true)
		}
		if dead.Load() {
			drop(w)
			return
		}
		EchoDecrypt(w, r)
	}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dead.Load() {
			drop(w)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// drop closes the request's connection without an answer.
func drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}
