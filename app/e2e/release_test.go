package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// makeRelease runs `make release` for linux/amd64 into dist, with the given extra environment.
func makeRelease(t *testing.T, dist string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command("make", "-s", "-C", filepath.Join("..", ".."), "release", "DIST="+dist, "RELEASE_PLATFORMS=linux/amd64")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make release:\n%s", out)
	bin, err := os.ReadFile(filepath.Join(dist, "idvault-linux-amd64"))
	require.NoError(t, err)
	return bin
}

// `make release` builds a static linux/amd64 binary that runs and says its version, with a
// SHA256SUMS line that matches it; a second build, from a fresh build cache so that nothing is
// reused from the first, gives the same bytes.
func TestReleaseBinaryIsStaticAndReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release binary twice, the second time from an empty build cache")
	}
	t.Parallel()
	dist := t.TempDir()
	bin := makeRelease(t, dist)

	out, err := exec.Command(filepath.Join(dist, "idvault-linux-amd64"), "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^idvault (devel|v\d+\.\d+\.\d+\S*)\ncommit: `+strings.TrimSpace(string(head))+`(-dirty)?\ngo:     go1\.\S+ linux/amd64\n$`), string(out))

	file, err := exec.Command("go", "version", "-m", filepath.Join(dist, "idvault-linux-amd64")).Output()
	require.NoError(t, err)
	require.Contains(t, string(file), "CGO_ENABLED=0", "a static binary")
	require.Contains(t, string(file), "-trimpath=true")

	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	sum := sha256.Sum256(bin)
	require.Equal(t, hex.EncodeToString(sum[:])+"  idvault-linux-amd64\n", string(sums))

	again := makeRelease(t, t.TempDir(), "GOCACHE="+t.TempDir())
	require.True(t, string(bin) == string(again), "two builds of the same commit differ")
}
