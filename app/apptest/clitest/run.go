package clitest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
)

// root is the repository's root directory.
func root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "the source path of package clitest")
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// embedded is config.yaml, read once per test process.
var embedded struct {
	once sync.Once
	raw  []byte
	err  error
}

// Embedded is the repository's config.yaml, the defaults the binary embeds, read once (shared:
// clipped, so that an append copies it).
func Embedded(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(root(t), "config.yaml")
	embedded.once.Do(func() { embedded.raw, embedded.err = os.ReadFile(path) })
	require.NoError(t, embedded.err)
	return slices.Clip(embedded.raw)
}

// GoModDirective is the argument of go.mod's directive name ("module", "go").
func GoModDirective(t testing.TB, name string) string {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod has a %s directive", name)
	return string(m[1])
}

// Env is the environment of a program run with the data file dir/idvault.db, stamped with a
// test build (v1.2.3-test, commit abc123).
func Env(dir string) cli.Env {
	return cli.Env{
		Build:   cli.BuildInfo{Version: "v1.2.3-test", Revision: "abc123", GoVersion: "go1.26.8"},
		Environ: []string{"IDVAULT_STORE__PATH=" + filepath.Join(dir, "idvault.db")},
	}
}

// Run runs the program in-process with the data file dir/idvault.db (the master key and admin
// token go beside it).
func Run(t testing.TB, dir string, args ...string) (string, string, int) {
	t.Helper()
	return RunWith(context.Background(), t, Env(dir), args...)
}

// RunWith runs the program in-process with e and the embedded defaults, and returns its
// standard output, standard error and exit code.
func RunWith(ctx context.Context, t testing.TB, e cli.Env, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e.Embedded = Embedded(t)
	code := cli.Run(ctx, args, &out, &errb, e)
	return out.String(), errb.String(), code
}

// RunEnv runs the program in-process with only the given environment.
func RunEnv(t testing.TB, environ []string, args ...string) (string, string, int) {
	t.Helper()
	return RunWith(context.Background(), t, cli.Env{Environ: environ}, args...)
}

// RunRecords runs the program in-process with stdin.
func RunRecords(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return RunWith(context.Background(), t, cli.Env{
		Stdin:      strings.NewReader(stdin),
		OpenExitDB: func(context.Context, config.Exit) (exitserver.DB, func(), error) { return nil, func() {}, nil },
	}, args...)
}

// InitData starts `idvault serve` in-process on a free port with the data in dir, as a user
// does once before any other command, and stops it as soon as it listens.
func InitData(t testing.TB, dir string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := Env(dir)
	e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false")
	e.Ready = func(string) { cancel() }
	_, errOut, code := RunWith(ctx, t, e, "serve")
	require.Equal(t, 0, code, errOut)
}

// Created is the JSON `app create --json` prints.
type Created struct {
	App struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Test bool   `json:"test"`
	} `json:"app"`
	AppSecret string `json:"app_secret"`
	AuthToken string `json:"auth_token"`
}

// Get fetches url with the given header (name, value, ...) and returns its status and body.
func Get(t testing.TB, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}
