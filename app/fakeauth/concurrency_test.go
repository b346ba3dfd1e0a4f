package fakeauth_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// Concurrent requests for one new email create exactly one identity.
func TestConcurrentRequestsCreateOneIdentity(t *testing.T) {
	t.Parallel()
	const n = 40
	cases := map[string]struct {
		target func(f *fixture) string
		key    func(t *testing.T, r apptest.Response) string
	}{
		"private_identity": {
			target: func(f *fixture) string { return f.base + "/private_identity?email=race%40example.com" },
			key: func(t *testing.T, r apptest.Response) string {
				return r.Map(t)["private_permanent_identity"].(string)
			},
		},
		"public_identities": {
			target: func(f *fixture) string { return f.base + "/public_identities?emails=race%40example.com" },
			key: func(t *testing.T, r apptest.Response) string {
				var got []entry
				r.JSON(t, &got)
				return got[0].PublicIdentity
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			got := make([]string, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					resp := apptest.Do(t, f.http, http.MethodGet, c.target(f), nil)
					if resp.Status == http.StatusOK {
						got[i] = c.key(t, resp)
					}
				})
			}
			close(start)
			wg.Wait()
			for i := range got {
				require.Equal(t, got[0], got[i], "request %d got another identity", i)
			}
			require.NotEmpty(t, got[0])
			perm, prov := f.privateIdentity(t, "race@example.com")
			if name == "private_identity" {
				require.Equal(t, perm, got[0], "the stored identity is the one every request got")
				require.Empty(t, prov)
			} else {
				require.Equal(t, apptest.PublicOf(t, prov), got[0], "the stored provisional identity is the one every request got")
			}
		})
	}
}

// private_identity and public_identities racing on one new email agree with the record left.
func TestConcurrentMixedRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 20
	perms, pubs := make([]string, n), make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			r := apptest.Do(t, f.http, http.MethodGet, f.base+"/private_identity?email=mix%40example.com", nil)
			if r.Status == http.StatusOK {
				perms[i] = r.Map(t)["private_permanent_identity"].(string)
			}
		})
		wg.Go(func() {
			<-start
			r := apptest.Do(t, f.http, http.MethodGet, f.base+"/public_identities?emails=mix%40example.com", nil)
			if r.Status == http.StatusOK {
				var got []entry
				r.JSON(t, &got)
				pubs[i] = got[0].PublicIdentity
			}
		})
	}
	close(start)
	wg.Wait()
	perm, prov := f.privateIdentity(t, "mix@example.com")
	allowed := []string{apptest.PublicOf(t, perm)}
	if prov != "" {
		allowed = append(allowed, apptest.PublicOf(t, prov))
	}
	for i := range n {
		require.Equal(t, perm, perms[i], "one permanent identity")
		require.Contains(t, allowed, pubs[i], "every public identity handed out belongs to the record")
	}
}

// Answers are built in reused buffers: concurrent lists of different lengths each get their
// own answer, the same as when asked alone.
func TestConcurrentListsGetTheirOwnAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lists := make([][]string, 6)
	want := make([][]string, len(lists))
	for i := range lists {
		for j := range 1 + i*7 {
			lists[i] = append(lists[i], fmt.Sprintf("list%d-%d@example.com", i, j))
		}
		want[i] = f.publicIdentities(t, lists[i]...)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		for i := range lists {
			wg.Go(func() {
				<-start
				for range 5 {
					require.Equal(t, want[i], f.publicIdentities(t, lists[i]...))
				}
			})
		}
	}
	close(start)
	wg.Wait()
}
