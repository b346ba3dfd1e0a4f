package e2e_test

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// The module path starts with a dotted host, so `go install MODULE@VERSION` can fetch it once
// the repository is published under it, and the README's install section shows that command.
func TestModulePathIsInstallable(t *testing.T) {
	t.Parallel()
	mod := clitest.GoModDirective(t, "module")
	host, _, _ := strings.Cut(mod, "/")
	require.Contains(t, host, ".", "module %s: the first path element must be a host name", mod)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "go install "+mod+"@")
}

// `go install MODULE@vX.Y.Z` as a user runs it: the module is served as a module proxy would
// serve a published release (a file:// GOPROXY holding this tree's tracked files at a made-up
// version; the dependencies come from the module cache), installed into an empty GOBIN, and the
// binary it gives says its version.
func TestGoInstallAtAVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module with go install")
	}
	t.Parallel()
	gobin, err := exec.LookPath("go")
	require.NoError(t, err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	tracked, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skip("not a git checkout: the module's files are its tracked files")
	}
	mod := clitest.GoModDirective(t, "module")
	const version = "v0.9.1"
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(mod), "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	write := func(name string, b []byte) { require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644)) }
	write("list", []byte(version+"\n"))
	write(version+".info", []byte(`{"Version":"`+version+`","Time":"2026-11-26T00:00:00Z"}`))
	write(version+".mod", gomod)

	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	require.NoError(t, err)
	zw := zip.NewWriter(zf)
	for _, name := range strings.Split(strings.TrimRight(string(tracked), "\x00"), "\x00") {
		info, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link: not in a module zip
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		w, err := zw.Create(mod + "@" + version + "/" + name)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, zf.Close())

	bin := t.TempDir()
	cmd := exec.Command(gobin, "install", mod+"@"+version)
	cmd.Dir = t.TempDir() // outside any module, as a user runs it
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy), "GOSUMDB=off",
		"GOFLAGS=-mod=mod", "GOBIN="+bin, "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go install %s@%s:\n%s", mod, version, out)

	got, err := exec.Command(filepath.Join(bin, "idvault"), "version").CombinedOutput()
	require.NoError(t, err, "%s", got)
	require.Contains(t, string(got), version, "idvault version names the tag it was installed at:\n%s", got)
}
