package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAdminThrottleDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal)
	require.NoError(t, l.Err())
	require.Equal(t, DefaultAdmin(), Admin{MaxWrongTokens: l.Config.Admin.MaxWrongTokens,
		WrongTokenWindow: l.Config.Admin.WrongTokenWindow, LockDuration: l.Config.Admin.LockDuration})
	require.Equal(t, 10, DefaultAdmin().MaxWrongTokens)

	l = loadFile(t, minimal+"admin:\n  max_wrong_tokens: 5\n  wrong_token_window: 1h\n", "IDVAULT_ADMIN__LOCK_DURATION=2h")
	require.NoError(t, l.Err())
	require.Equal(t, 5, l.Config.Admin.MaxWrongTokens)
	require.Equal(t, time.Hour, l.Config.Admin.WrongTokenWindow)
	require.Equal(t, 2*time.Hour, l.Config.Admin.LockDuration)

	out := strings.Join(l.Redacted(), "\n")
	require.Contains(t, out, "admin.max_wrong_tokens = 5", "the throttle's numbers are not secrets")
	require.Contains(t, out, "admin.wrong_token_window = 1h")
}

func TestAdminThrottleIsValidated(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+"admin:\n  max_wrong_tokens: 0\n  wrong_token_window: 0s\n  lock_duration: 2500000h\n")
	err := l.Err()
	require.ErrorContains(t, err, "admin.max_wrong_tokens: must be between 1 and 1000")
	require.ErrorContains(t, err, "admin.wrong_token_window: must be between 1s and 8784h")
	require.ErrorContains(t, err, "admin.lock_duration: must be between 1s and 8784h")
}

// admin.token is one a client can send after "Bearer ": a space at either end or a second line
// would make every request fail as a wrong token. The problem never holds the token.
func TestAdminTokenIsSendable(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]string{
		"short":          "IDVAULT_ADMIN__TOKEN=short",
		"trailing space": "IDVAULT_ADMIN__TOKEN=0123456789abcdef0123 ",
		"second line":    "IDVAULT_ADMIN__TOKEN=0123456789abcdef\nsecond",
	} {
		err := loadFile(t, minimal, env).Err()
		require.ErrorContains(t, err, "admin.token: must", name)
		require.NotContains(t, err.Error(), "0123456789abcdef", name)
	}
	require.NoError(t, loadFile(t, minimal, "IDVAULT_ADMIN__TOKEN=0123456789abcdef 0123").Err(), "a space inside is sent as is")

	// The identity server's and the exit server's bearer tokens follow the same rule.
	for _, key := range []string{"IDENTITY_SERVER", "EXIT"} {
		err := loadFile(t, minimal, "IDVAULT_"+key+"__TOKEN=0123456789abcdef0123 ").Err()
		require.ErrorContains(t, err, strings.ToLower(key)+".token: must not start or end with a space", key)
		require.NotContains(t, err.Error(), "0123456789abcdef", key)
	}
}
