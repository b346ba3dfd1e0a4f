package apptest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idvault/idvault/app/exitclient/outfiles"
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

// Hanging is a stand-in exit server whose decrypt hangs; Hung is closed once it does.
type Hanging struct {
	*httptest.Server
	Hung chan struct{}
}

// HangingDecrypt answers the first ok decrypts whole, then starts the next answer and waits
// for the client to go away.
func HangingDecrypt(t testing.TB, ok int32) Hanging {
	t.Helper()
	var n atomic.Int32
	hung := make(chan struct{})
	srv := StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
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
