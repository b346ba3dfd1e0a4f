package apptest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Secrets collects the private identities (or other secrets) a test was handed, to check at the
// end that none of them reached the log. Safe for concurrent use.
type Secrets struct {
	mu   sync.Mutex
	list []string
}

// Keep records secrets (empty strings are ignored).
func (s *Secrets) Keep(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		if v != "" {
			s.list = append(s.list, v)
		}
	}
}

// RequireNotLogged fails if any kept secret, a recognisable 24-byte chunk of one (in case it was
// logged cut), or an email of the example.com test domain is in logs.
func (s *Secrets) RequireNotLogged(t testing.TB, logs string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.list {
		require.NotContains(t, logs, v, "a secret reached the log")
		if len(v) >= 48 {
			require.NotContains(t, logs, v[len(v)/2:len(v)/2+24], "part of a secret reached the log")
		}
	}
	require.NotContains(t, logs, "@example.com", "an email reached the log")
}
