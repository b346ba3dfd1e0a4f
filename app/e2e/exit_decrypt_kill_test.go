package e2e_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/exit/encryption"
)

// The real binary's decrypt, killed midway, leaves no partial file under a final name, and a
// rerun completes the tree.
func TestExitDecryptResumesAfterKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db, who, url := clitest.ExitWithOneUser(t)

	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	want := map[string][]byte{}
	for i := range 40 {
		clear := make([]byte, 3<<20)
		_, _ = rand.Read(clear)
		enc, err := db.Encrypt(who, encryption.V11, clear, encryption.EncryptOptions{})
		require.NoError(t, err)
		rel := filepath.Join(fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%02d", i))
		require.NoError(t, os.MkdirAll(filepath.Join(in, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(in, rel), enc, 0o600))
		want[rel] = clear
	}

	cmd := exec.Command(apptest.Binary(t), "exit", "decrypt", "--url", url, "--in", in, "--out", out, "--jobs", "2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	finals := func() int {
		n := 0
		_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasSuffix(path, outfiles.PartSuffix) {
				n++
			}
			return nil
		})
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for finals() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killedAt := finals()
	require.Less(t, killedAt, 40, "killed before the end (stderr: %s)", stderr.String())
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.True(t, bytes.Equal(clear, got), "%s is whole or absent, never partial", rel)
	}

	stdout, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "decrypt", "--url", url, "--in", in, "--out", out)
	require.Equal(t, 0, code, "%s %s", stdout, errOut)
	require.Contains(t, errOut, fmt.Sprintf("%d already done", killedAt))
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err)
		require.True(t, bytes.Equal(clear, got), rel)
		_, err = os.Stat(filepath.Join(out, rel+outfiles.PartSuffix))
		require.True(t, os.IsNotExist(err), "no temporary file left after the rerun: %s", rel)
	}
}
