package cli_test

import (
	"bytes"
	"fmt"
	"net"
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
	"github.com/idvault/idvault/exit/pgtest"
)

// The exit tool guide's walkthrough (exit/README.md), as a new user pastes it from a clone: its sh
// block, in one bash, from a fresh directory holding the binary, with `make` run in the
// repository; only the ports differ (free ones: PGPORT for `make pg`, the exit server's
// listen address in place of 127.0.0.1:8000).
func TestExitGuideWalkthrough(t *testing.T) {
	t.Parallel()
	pgtest.Bin(t, "initdb") // skips (or fails under IDVAULT_REQUIRE_EXTERNAL) without PostgreSQL
	// The same for the tools the block runs, each in the Debian package of its name.
	for _, tool := range []string{"jq", "openssl", "make", "curl"} {
		apptest.Command(t, tool, tool)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "exit", "README.md"))
	require.NoError(t, err)
	blocks := walkthroughBlocks(t, string(raw), exitWalkthroughMarker)
	require.Len(t, blocks, 1, "the exit guide's walkthrough is marked with %s", exitWalkthroughMarker)
	block := blocks[0]
	require.Contains(t, block, `eval "$(make -s pg)"`)

	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	bin, err := os.ReadFile(apptest.Binary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "idvault"), bin, 0o755))
	listen := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	// The cluster's directory must be reachable by the postgres OS user when running as root
	// (t.TempDir's parent is 0700): a directory of its own under the system's temp directory.
	pgParent, err := os.MkdirTemp("", "idvault-exit-guide-pg-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(pgParent, 0o755))
	t.Cleanup(func() { os.RemoveAll(pgParent) })
	pgDir := filepath.Join(pgParent, "pg")
	// -e: any failing step fails the test (exit decrypt's status 1, by design, is caught by the
	// block itself and said).
	script := "set -em\nmake() { command make -C " + strconv.Quote(repo) + ` "$@"; }` + "\n" +
		strings.ReplaceAll(block, "127.0.0.1:8000", listen)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PGDIR="+pgDir, fmt.Sprintf("PGPORT=%d", apptest.FreePort(t)), "IDVAULT_EXIT__LISTEN="+listen)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		_ = exec.Command(filepath.Join(repo, ".ci", "pg"), "stop", pgDir).Run()
	})
	require.NoError(t, cmd.Run(), "%s", out.String())

	text := out.String()
	require.Contains(t, text, "dump dump loaded: 3 files")
	require.Contains(t, text, "exit 1: the dump's negative cases fail on purpose")
	m := regexp.MustCompile(`(\d+) identities: (\d+) imported, 0 already imported, 0 refused`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	require.Equal(t, m[1], m[2])
	m = regexp.MustCompile(`(\d+) ciphertexts \+ (\d+) negative cases`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	entries, err := os.ReadDir(filepath.Join(dir, "clear"))
	require.NoError(t, err)
	require.Equal(t, m[1], strconv.Itoa(len(entries)), "every ciphertext decrypted:\n%s", text)
	require.Equal(t, strings.Count(text, "\tkey_not_found\t")+strings.Count(text, "\tdecryption_failed\t")+
		strings.Count(text, "\tunsupported_format\t")+strings.Count(text, "\ttruncated_data\t"), mustAtoi(t, m[2]), "every negative case failed, by name:\n%s", text)
	// The decrypted tree was checked by sha256sum against every expected file.
	require.Contains(t, text, "every expected clear file is there, byte for byte")
	sums, err := os.ReadFile(filepath.Join(dir, "dump", "SHA256SUMS"))
	require.NoError(t, err)
	require.Equal(t, m[1], strconv.Itoa(strings.Count(string(sums), "\n")), "SHA256SUMS lists every ciphertext's clear file")
	require.NotContains(t, text, "import the identity of user", "every identity is imported: key_not_found names nobody to import")
	// The server it started is stopped, and forget said what it deleted.
	conn, err := net.DialTimeout("tcp", listen, time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("the exit server is still listening after the walkthrough")
	}
	require.Regexp(t, `exit_user_keys: [1-9]\d* rows`, text, "forget said what it deleted")
	_, err = os.Stat(pgDir)
	require.ErrorIs(t, err, os.ErrNotExist, "make pg-stop removed the cluster")
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
