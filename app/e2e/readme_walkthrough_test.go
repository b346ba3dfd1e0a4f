package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/mail/mailtest"
)

// The README's walkthrough, run as a new user would: its marked blocks, in order, in one bash
// with -e (any failing step fails the test), from a fresh directory holding only the binary,
// against MailDev. Ports come from the environment variables the README names.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks := walkthroughBlocks(t, string(raw), walkthroughMarker)
	require.GreaterOrEqual(t, len(blocks), 5, "the README's walkthrough blocks are marked with %s", walkthroughMarker)

	apptest.Command(t, "curl", "curl")
	md := mailtest.StartMailDev(t)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(apptest.Binary(t), filepath.Join(dir, "idvault")))
	listen := "127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))

	script := "set -euo pipefail\n" + strings.Join(blocks, "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDVAULT_") { // the developer's own settings stay out
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "IDVAULT_SERVER__LISTEN="+listen, "IDVAULT_MAIL__PORT="+strconv.Itoa(md.SMTPPort))
	// Its own process group, so that a server left running by a failed step is stopped too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	require.NoError(t, err, "the README walkthrough failed; its output:\n%s", out.String())
	output := out.String()
	t.Logf("walkthrough output:\n%s", output)

	// Every interface answered.
	for _, want := range []string{`"status":"ready"`, "private_permanent_identity", "public_identity",
		`"serviceIdentity"`, `"publicIdentity"`, "OK"} {
		require.Contains(t, output, want)
	}
	// The code read back is the one mailed, and it verified.
	m := regexp.MustCompile(`(?m)^code: (\d{8})$`).FindStringSubmatch(output)
	require.NotNil(t, m, output)
	emails := md.WaitForEmails(t, 1, 10*time.Second)
	require.Equal(t, "Your code: "+m[1], emails[0].Subject)
	require.Equal(t, "alice@example.com", emails[0].To[0].Address)

	// The app's secrets: in a 0600 file, never printed.
	envFile := filepath.Join(dir, "data", "demo-app.env")
	st, err := os.Stat(envFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	vars, err := os.ReadFile(envFile)
	require.NoError(t, err)
	for _, name := range []string{"APP_SECRET", "AUTH_TOKEN"} {
		v := regexp.MustCompile(name + `='([^']+)'`).FindStringSubmatch(string(vars))
		require.NotNil(t, v, name)
		require.NotContains(t, output, v[1], "%s shown in the walkthrough's output", name)
	}

	// Nothing the walkthrough leaves behind could be committed: the repository's .gitignore
	// covers every file.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var left []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			left = append(left, rel)
		}
		return err
	}))
	require.Contains(t, left, filepath.Join("data", "idvault.db"))
	for _, rel := range left {
		check := exec.Command("git", "check-ignore", "--no-index", "-q", rel)
		check.Dir = root
		require.NoError(t, check.Run(), "the walkthrough leaves %s, which git would commit", rel)
	}
	_, err = os.Stat(filepath.Join(dir, "data", "idvault.db.addr"))
	require.ErrorIs(t, err, os.ErrNotExist, "the walkthrough ends with a clean shutdown")
}
