package openapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/external"
)

// openAPITools is where .ci/install-openapi-tools put swagger-parser, openapi-typescript and
// typescript (`make deps`), or the test is skipped (failed under IDVAULT_REQUIRE_EXTERNAL=1).
func openAPITools(t *testing.T) (node, dir string) {
	t.Helper()
	dir = external.CacheDir("IDVAULT_OPENAPI_TOOLS_DIR", "openapi-tools")
	node = external.NodeModules(t, dir, ".ci/install-openapi-tools "+dir,
		"@apidevtools/swagger-parser", "openapi-typescript", "typescript")
	return node, dir
}

// Both documents pass @apidevtools/swagger-parser's validation.
func TestDocumentsPassSwaggerParser(t *testing.T) {
	t.Parallel()
	node, tools := openAPITools(t)
	out, err := exec.Command(node, filepath.Join("testdata", "client", "validate.js"), tools, "openapi.json", "exit.json").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "openapi.json: valid\nexit.json: valid\n", string(out))
}

// A TypeScript client generated from openapi.json (openapi-typescript) compiles in strict mode
// and reads the message and trace_id of a real error answer through its types.
func TestGeneratedClientReadsAnErrorMessage(t *testing.T) {
	t.Parallel()
	node, tools := openAPITools(t)
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(node, args...).CombinedOutput()
		require.NoError(t, err, "node %v:\n%s", args, out)
		return string(out)
	}
	run(filepath.Join(tools, "node_modules", "openapi-typescript", "bin", "cli.js"), "openapi.json", "-o", filepath.Join(dir, "api.ts"))
	src, err := os.ReadFile(filepath.Join("testdata", "client", "main.ts"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.ts"), src, 0o644))
	run(filepath.Join(tools, "node_modules", "typescript", "bin", "tsc"), "--strict", "--noUnusedLocals", "false",
		"--module", "commonjs", "--target", "es2020", "--outDir", filepath.Join(dir, "out"), filepath.Join(dir, "main.ts"))

	// A server without an admin token: GET /admin/apps answers admin_disabled 404.
	r := apptest.Do(t, apptest.New(t).Server(nil), http.MethodGet, "/admin/apps", nil, "Authorization", "Bearer some-token")
	require.Equal(t, http.StatusNotFound, r.Status)
	answer := filepath.Join(dir, "answer.json")
	require.NoError(t, os.WriteFile(answer, r.Body, 0o644))
	var got struct {
		Named, MessageIsString, TraceIDIsString bool
		Message, TraceID                        string
	}
	require.NoError(t, json.Unmarshal([]byte(run(filepath.Join(dir, "out", "main.js"), answer)), &got))
	require.True(t, got.Named && got.MessageIsString && got.TraceIDIsString)
	var want struct {
		Error struct{ Message, TraceID string }
	}
	require.NoError(t, json.Unmarshal(r.Body, &want))
	require.NotEmpty(t, want.Error.Message)
	require.Equal(t, want.Error.Message, got.Message)
	require.Equal(t, r.Header.Get("X-Request-ID"), got.TraceID)
}
