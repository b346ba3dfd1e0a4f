package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// onTerminal runs the binary with stdin and stdout on a pseudo-terminal (script(1)), typing
// input, and returns what the terminal showed and the exit code.
func onTerminal(t *testing.T, dir string, env []string, input string, args ...string) (string, int) {
	t.Helper()
	apptest.Command(t, "script", "bsdutils") // runs a command on a terminal
	cmdline := apptest.Binary(t)
	for _, a := range args {
		cmdline += " '" + a + "'"
	}
	cmd := exec.Command("script", "-qec", cmdline, "/dev/null")
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code := apptest.ExitCode(t, cmd.Run())
	return out.String(), code
}

// On a terminal, app delete asks first; "n" keeps the app, "y" deletes it, --yes skips the
// question. Without a terminal (scripts) it does not ask.
func TestAppDeleteConfirmsOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	create := func(name string) string {
		out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", name, "--env")
		require.Equal(t, 0, code, errOut)
		return regexp.MustCompile(`APP_ID='([^']+)'`).FindStringSubmatch(out)[1]
	}
	exists := func(id string) bool {
		_, _, code := apptest.RunCLI(t, dir, env, "app", "show", id)
		return code == 0
	}

	id := create("asked")
	out, code := onTerminal(t, dir, env, "n\n", "app", "delete", id)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `Delete app "asked"`)
	require.Contains(t, out, "not confirmed")
	require.True(t, exists(id), "answering no keeps the app")

	out, code = onTerminal(t, dir, env, "y\n", "app", "delete", id)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "deleted app")
	require.False(t, exists(id))

	id = create("yes-flag")
	out, code = onTerminal(t, dir, env, "", "app", "delete", "--yes", id)
	require.Equal(t, 0, code, out)
	require.NotContains(t, out, "Delete app")
	require.False(t, exists(id))

	id = create("script")
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "delete", id)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out+errOut, "Delete app")
	require.False(t, exists(id))
}

// The binary built by `make build` says its version (devel: tests do not run on a tagged
// commit with the tree clean of their changes, or the release tag), its commit (from the build
// information Go embeds) and its Go version; /metrics says the same in idvault_build_info.
func TestVersionOfTheBuiltBinary(t *testing.T) {
	t.Parallel()
	out, errOut, code := apptest.RunCLI(t, t.TempDir(), nil, "version")
	require.Equal(t, 0, code, errOut)
	m := regexp.MustCompile(`^idvault (devel|v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\ncommit: ([0-9a-f]{40})(-dirty)?\ngo:     (go\S+) linux/`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(head)), m[2])
	again, _, code := apptest.RunCLI(t, t.TempDir(), nil, "--version")
	require.Equal(t, 0, code)
	require.Equal(t, out, again)

	dir := t.TempDir()
	p := apptest.Start(t, dir, apptest.DataEnv(t, dir))
	resp, err := http.Get(p.URL + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	want := fmt.Sprintf(`idvault_build_info{goversion=%q,revision=%q,version=%q} 1`, m[4], m[2]+m[3], m[1])
	require.Contains(t, string(body), want)
	p.Stop(t)
}
