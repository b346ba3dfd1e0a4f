package idserver_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Answers are built in reused buffers: concurrent requests whose answers differ in length (with
// and without a provisional identity, POST /identity and POST /public_identity) each get their
// own answer, the same as when asked alone.
func TestConcurrentAnswersAreTheirOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	type ask struct{ path, email string }
	var asks []ask
	for i := range 4 {
		plain, withProv := fmt.Sprintf("plain%d@example.com", i), fmt.Sprintf("prov%d@example.com", i)
		f.publicIdentity(t, withProv) // a provisional identity first: /identity then answers it too
		f.identity(t, plain)
		f.identity(t, withProv)
		asks = append(asks, ask{"/identity", plain}, ask{"/identity", withProv}, ask{"/public_identity", plain})
	}
	for _, a := range asks { // a first round settles the records (public_identity may add a provisional identity)
		f.do(t, http.MethodPost, a.path, map[string]any{"email": a.email})
	}
	want := make([]string, len(asks))
	for i, a := range asks {
		want[i] = string(f.do(t, http.MethodPost, a.path, map[string]any{"email": a.email}).Body)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 6 {
		for i, a := range asks {
			wg.Go(func() {
				<-start
				for range 5 {
					require.Equal(t, want[i], string(f.do(t, http.MethodPost, a.path, map[string]any{"email": a.email}).Body))
				}
			})
		}
	}
	close(start)
	wg.Wait()
}
