package outfiles_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/idvault/idvault/app/exitclient/outfiles"
)

func authorizedKey(t *testing.T, pub any) string {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// Every kind of recipient the age command takes but plugins, from the flag and from a file;
// what is not a recipient is refused naming the flag or the line, and never quoted.
func TestAgeRecipients(t *testing.T) {
	t.Parallel()
	x, err := age.GenerateX25519Identity()
	require.NoError(t, err)
	pq, err := age.GenerateHybridIdentity()
	require.NoError(t, err)
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	good := []string{x.Recipient().String(), pq.Recipient().String(),
		authorizedKey(t, edPub) + " alice@laptop", authorizedKey(t, &rsaKey.PublicKey)}

	rs, err := outfiles.AgeRecipients(good, "")
	require.NoError(t, err)
	require.Len(t, rs, 4)

	file := filepath.Join(t.TempDir(), "recipients.txt")
	body := "\ufeff# the team\r\n" + strings.Join(good, "\r\n\r\n") + "\r\n   \r\n"
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	rs, err = outfiles.AgeRecipients(nil, file)
	require.NoError(t, err)
	require.Len(t, rs, 4, "a BOM, CRLF line ends, blank lines and comments are skipped")

	secret := x.String() // AGE-SECRET-KEY-1...
	for _, tc := range []struct {
		name, value, want string
	}{
		{"an age private key", secret, "a private key, not a recipient"},
		{"an SSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----", "a private key, not a recipient"},
		{"a plugin recipient", "age1yubikey1q2w3e4r5t6y7u8i9o0p", "a plugin recipient"},
		{"a tag recipient", "age1tag1qqqqqqqq", "a tag recipient"},
		{"a malformed X25519 key", "age1notakey", "a malformed or unsupported recipient (age1)"},
		{"an SSH DSA key", "ssh-dss AAAAB3NzaC1kc3MAAACBAP", "a malformed or unsupported recipient (ssh-dss)"},
		{"anything else", "github:alice", "not an age recipient"},
	} {
		_, err := outfiles.AgeRecipients([]string{good[0], tc.value}, "")
		require.ErrorContains(t, err, "--age-recipient (#2): "+tc.want, tc.name)
		require.NotContains(t, err.Error(), tc.value, tc.name)

		require.NoError(t, os.WriteFile(file, []byte("# keys\n"+good[0]+"\n"+tc.value+"\n"), 0o600))
		_, err = outfiles.AgeRecipients(nil, file)
		require.ErrorContains(t, err, "line 3: "+tc.want, tc.name)
		require.NotContains(t, err.Error(), tc.value, tc.name)
	}

	for name, body := range map[string]string{
		"no recipient in the file":         "# only a comment\n\n",
		"a line is longer than 8192 bytes": "ssh-rsa " + strings.Repeat("A", 9000) + "\n",
	} {
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		_, err := outfiles.AgeRecipients(nil, file)
		require.ErrorContains(t, err, name)
	}
	_, err = outfiles.AgeRecipients(nil, "")
	require.EqualError(t, err, "no age recipient")
}

// A recipient, whatever it holds, is read without a panic, and a refusal never quotes it (it may
// be a private key pasted in the wrong place).
func FuzzAgeRecipient(f *testing.F) {
	for _, s := range []string{"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
		"AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsecretish comment", "ssh-rsa AAAA", "age1pq1zzzz", "age1x1y1z", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := outfiles.AgeRecipients([]string{s}, "")
		if err != nil && len(strings.TrimSpace(s)) >= 12 && strings.Contains(err.Error(), strings.TrimSpace(s)) {
			t.Fatalf("the error quotes the value: %v", err)
		}
	})
}
