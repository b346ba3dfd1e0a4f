package cli_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/csv"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/exit/encryption"
)

// ageKey makes an age identity, writes it where the age command reads it, and returns its
// recipient and the identity file.
func ageKey(t *testing.T, dir string) (string, string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	require.NoError(t, err)
	file := filepath.Join(dir, "key.txt")
	require.NoError(t, os.WriteFile(file, []byte(id.String()+"\n"), 0o600))
	return id.Recipient().String(), file
}

// sshKey makes an SSH Ed25519 key pair, writes the private key where the age command reads it
// (OpenSSH's format), and returns the public key's authorized_keys line and the key file.
func sshKey(t *testing.T, dir string) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sp, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	file := filepath.Join(dir, "id_ed25519")
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(block), 0o600))
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " team@example.com", file
}

// ageOpen decrypts an age file with Debian's age command.
func ageOpen(t *testing.T, bin, key string, data []byte) []byte {
	t.Helper()
	cmd := exec.Command(bin, "-d", "-i", key)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "age -d: %s", stderr.String())
	return out
}

// `exit decrypt --age-recipient` writes <name>.age and no clear file (not even a part file);
// the age command opens each one to the clear bytes; a rerun skips what is done.
// `decrypt-records --age-recipients-file` writes each field as the base64 of an age file.
func TestExitDecryptToAge(t *testing.T) {
	t.Parallel()
	ageBin := apptest.AgeCommand(t)
	db, who, url := clitest.ExitWithOneUser(t)
	dir := t.TempDir()
	recipient, key := ageKey(t, dir)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	want := map[string][]byte{}
	for name, v := range map[string]encryption.Version{"small.bin": encryption.V10, "sub/stream.bin": encryption.V11} {
		clear := bytes.Repeat([]byte(name+" clear text "), 9000) // over age's 64 KiB chunks
		ct, err := db.Encrypt(who, v, clear, encryption.EncryptOptions{ChunkSize: 8192})
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(in, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(in, name), ct, 0o600))
		want[name] = clear
	}

	_, errOut, code := clitest.RunRecords(t, "", "exit", "decrypt", "--url", url, "--in", in, "--out", out, "--age-recipient", recipient)
	require.Equal(t, 0, code, errOut)
	var names []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, path)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	}))
	require.ElementsMatch(t, []string{"small.bin.age", "sub/stream.bin.age"}, names, "only age files, no clear file")
	for name, clear := range want {
		sealed, err := os.ReadFile(filepath.Join(out, name+".age"))
		require.NoError(t, err)
		require.False(t, bytes.Contains(sealed, clear[:40]), "no clear text in the age file")
		require.Equal(t, clear, ageOpen(t, ageBin, key, sealed), name)
	}
	_, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt", "--url", url, "--in", in, "--out", out, "--age-recipient", recipient)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "2 already done", "a rerun skips the age files already written")

	// Records: each field becomes the base64 of an age file; the other columns are unchanged.
	// The recipients file holds an SSH public key too (as in ~/.ssh/id_ed25519.pub), whose
	// private key opens the fields as well.
	recipients := filepath.Join(dir, "recipients.txt")
	other, _ := ageKey(t, t.TempDir())
	sshPub, sshFile := sshKey(t, t.TempDir())
	require.NoError(t, os.WriteFile(recipients, []byte("# the team's keys\r\n"+recipient+"\r\n\r\n"+other+"\r\n  "+sshPub+"\r\n"), 0o600))
	enc := func(clear string) string {
		ct, err := db.Encrypt(who, encryption.V9, []byte(clear), encryption.EncryptOptions{})
		require.NoError(t, err)
		return base64.StdEncoding.EncodeToString(ct)
	}
	records := "id,secret\n1," + enc("first secret") + "\n2,\n3," + enc("third, with comma") + "\n"
	stdout, errOut, code := clitest.RunRecords(t, records, "exit", "decrypt-records", "--url", url, "--in", "-", "--out", "-", "--format", "csv",
		"--field", "secret", "--age-recipients-file", recipients)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, stdout, "first secret")
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"id", "secret"}, rows[0])
	require.Equal(t, []string{"2", ""}, rows[2], "an empty field passes through")
	for i, clear := range map[int]string{1: "first secret", 3: "third, with comma"} {
		sealed, err := base64.StdEncoding.DecodeString(rows[i][1])
		require.NoError(t, err)
		require.Equal(t, clear, string(ageOpen(t, ageBin, key, sealed)))
		require.Equal(t, clear, string(ageOpen(t, ageBin, sshFile, sealed)), "opened with the SSH key")
	}

	for name, args := range map[string][]string{
		"bad recipient":                {"--age-recipient", "age1notakey"},
		"clear encoding other than 64": {"--age-recipient", recipient, "--clear-encoding", "text"},
	} {
		_, errOut, code := clitest.RunRecords(t, records, append([]string{"exit", "decrypt-records", "--url", url, "--in", "-", "--out", "-", "--format", "csv", "--field", "secret"}, args...)...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
	}
	_, errOut, code = clitest.RunRecords(t, "", "exit", "decrypt", "--url", url, "--in", in, "--out", filepath.Join(dir, "out2"), "--age-recipients-file", filepath.Join(dir, "none.txt"))
	require.Equal(t, 2, code, errOut)
}
