package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConsoleOnByDefaultOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	cases := []struct {
		enabled, listen string
		on              bool
	}{
		{"auto", "127.0.0.1:8080", true}, {"auto", "[::1]:8080", true}, {"auto", "localhost:8080", true},
		{"auto", "LOCALHOST:8080", true}, {"auto", "localhost.:8080", true}, {"auto", "[::1%lo]:8080", true},
		{"auto", "0.0.0.0:8080", false}, {"auto", "10.0.0.5:8080", false}, {"", "192.168.1.2:80", false},
		{"true", "0.0.0.0:8080", true}, {"1", "0.0.0.0:8080", true}, {"false", "127.0.0.1:8080", false},
	}
	for _, c := range cases {
		require.Equal(t, c.on, Console{Enabled: c.enabled}.On(c.listen), "%+v", c)
	}
}

func TestConsoleEnabledFromEnvAndYAML(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{Environ: []string{"IDVAULT_CONSOLE__ENABLED=false"}})
	require.NoError(t, err)
	require.Empty(t, l.Config.Console.validate())
	require.False(t, l.Config.Console.On("127.0.0.1:8080"))

	l, err = Load(Sources{Embedded: []byte("console:\n  enabled: true\n")})
	require.NoError(t, err)
	require.Empty(t, l.Problems)
	require.True(t, l.Config.Console.On("0.0.0.0:8080"), "a YAML boolean switches it on")

	l, err = Load(Sources{Environ: []string{"IDVAULT_CONSOLE__ENABLED=maybe"}})
	require.NoError(t, err)
	require.ErrorContains(t, l.Err(), "console.enabled")
}
