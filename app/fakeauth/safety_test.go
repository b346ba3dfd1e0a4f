package fakeauth_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

func TestConfigRefusesRemoteFakeAuth(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		listen      string
		enabled     bool
		allowRemote bool
		refused     bool
	}{
		"loopback v4":             {"127.0.0.1:8080", true, false, false},
		"loopback v6":             {"[::1]:8080", true, false, false},
		"localhost":               {"localhost:8080", true, false, false},
		"all interfaces":          {"0.0.0.0:8080", true, false, true},
		"empty host (all)":        {":8080", true, false, true},
		"public address":          {"192.0.2.10:8080", true, false, true},
		"all interfaces, allowed": {"0.0.0.0:8080", true, true, false},
		"all interfaces, off":     {"0.0.0.0:8080", false, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Default()
			cfg.Server.Listen = c.listen
			cfg.FakeAuth.Enabled, cfg.FakeAuth.AllowRemote = c.enabled, c.allowRemote
			var msgs []string
			for _, err := range cfg.Validate() {
				msgs = append(msgs, err.Error())
			}
			joined := strings.Join(msgs, "\n")
			if c.refused {
				require.Contains(t, joined, "fakeauth.enabled")
				require.Contains(t, joined, "fakeauth.allow_remote")
			} else {
				require.NotContains(t, joined, "fakeauth")
			}
		})
	}
	require.False(t, config.Default().FakeAuth.Enabled, "built-in defaults (production) have fake authentication off")
}
