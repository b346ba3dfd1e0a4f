package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A secret written unquoted with a leading "!" or "&" is read by YAML as a tag or an anchor and
// lost; the config names the key and the line, without the value, and does not start.
func TestValuesYAMLWouldDropAreRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string // problems, in order; nil: none of this kind
	}{
		{"tag", "admin:\n  token: !Sup3rSecretAdminT0ken\n",
			[]string{`admin.token: line 2: the value starts with "!"`}},
		{"tag before a word", "mail:\n  password: !Pa55 word\n",
			[]string{`mail.password: line 2: the value starts with "!"`}},
		{"anchor", "identity_server:\n  token: &Zyxwvutsrqponmlkji\n",
			[]string{`identity_server.token: line 2: the value starts with "&"`}},
		{"in a list", "apps:\n  - name: a\n    secret: !abc\n",
			[]string{`apps.0.secret: line 3: the value starts with "!"`}},
		{"quoted values are kept", "admin:\n  token: \"!Sup3rSecretAdminT0ken\"\nidentity_server:\n  token: '&Zyxwvutsrqponmlkji'\n", nil},
		{"core tags and anchors on values are kept", "log: &l\n  level: !!str warn\nmetrics:\n  enabled: !!bool true\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tc.body), 0o600))
			l, err := Load(Sources{File: file})
			require.NoError(t, err)
			var got []string
			for _, p := range l.Problems {
				if msg := p.Error(); strings.Contains(msg, "which YAML reads as") {
					got = append(got, msg)
					for _, secret := range []string{"Sup3r", "Pa55", "Zyxw", "abc"} {
						require.NotContains(t, msg, secret, "the value is never quoted")
					}
				}
			}
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				require.True(t, strings.HasPrefix(got[i], w), "%q does not start with %q", got[i], w)
				require.Contains(t, got[i], "write the value in quotes")
			}
			if tc.want != nil {
				require.Error(t, l.Err(), "the server does not start")
			}
		})
	}
}
