package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildFromArchive exports ref of the repository at repo with `git archive` (no .git: a
// release's source download), runs `make build` in the exported tree and returns what its
// `idvault version` prints, and the binary.
func buildFromArchive(t *testing.T, repo, ref string) (string, []byte) {
	t.Helper()
	src := t.TempDir()
	out, err := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", repo, ref, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = os.Stat(filepath.Join(src, ".git"))
	require.True(t, os.IsNotExist(err), "the archive has no .git")
	out, err = exec.Command("make", "-s", "-C", src, "build").CombinedOutput()
	require.NoError(t, err, "make build:\n%s", out)
	out, err = exec.Command(filepath.Join(src, "idvault"), "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	bin, err := os.ReadFile(filepath.Join(src, "idvault"))
	require.NoError(t, err)
	return string(out), bin
}

// A user who builds from a `git archive` tarball gets a binary whose `idvault version` names
// the commit, as a bug report needs (not "unknown"), and the release tag when the archive was
// made from one: a clone of this repository is tagged v1.2.3 and archived again. The archive
// builds to the same bytes as the clone does, so a release can be checked from either.
func TestBuildFromGitArchiveSaysItsVersionAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice from exported trees")
	}
	t.Parallel()
	clone := t.TempDir()
	out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", filepath.Join("..", ".."), clone).CombinedOutput()
	require.NoError(t, err, "%s", out)
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	commit := strings.TrimSpace(string(head))

	version, fromArchive := buildFromArchive(t, clone, "HEAD")
	require.Regexp(t, `^idvault devel\ncommit: `+commit+`\ngo:     go1\.\S+ `, version)
	out, err = exec.Command("make", "-s", "-C", clone, "build").CombinedOutput()
	require.NoError(t, err, "make build in the clone:\n%s", out)
	fromClone, err := os.ReadFile(filepath.Join(clone, "idvault"))
	require.NoError(t, err)
	require.True(t, string(fromClone) == string(fromArchive), "the clone and its archive build to different bytes")

	out, err = exec.Command("git", "-C", clone, "tag", "v1.2.3").CombinedOutput()
	require.NoError(t, err, "%s", out)
	version, _ = buildFromArchive(t, clone, "v1.2.3")
	require.Regexp(t, `^idvault v1\.2\.3\ncommit: `+commit+`\ngo:     go1\.\S+ `, version)
}
