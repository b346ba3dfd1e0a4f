package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/apptest/external"
	"github.com/idvault/idvault/app/cli"
)

// exit decrypt > failures.txt on a full disk: the list of failed files cannot be written, and
// standard error says so, instead of an empty file beside a summary that counts the failures.
func TestExitDecryptFailureListOnAFullDisk(t *testing.T) {
	mnt := external.Tmpfs(t, "64k")
	external.FillTmpfs(t, mnt)
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error": {"code": "key_not_found", "message": "no key", "trace_id": "x"}}`)
	}, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	clitest.WriteFiles(t, in, 3)
	stdout, err := os.Create(filepath.Join(mnt, "failures.txt"))
	require.NoError(t, err)
	defer stdout.Close()
	var errb bytes.Buffer
	code := cli.Run(context.Background(), []string{"exit", "decrypt", "--url", srv.URL, "--in", in, "--out", filepath.Join(dir, "out")},
		stdout, &errb, cli.Env{Embedded: clitest.Embedded(t)})
	require.Equal(t, 1, code, errb.String())
	require.Contains(t, errb.String(), "3 failed")
	require.Contains(t, errb.String(), "the list of the 3 failed files is incomplete")
	require.Contains(t, errb.String(), "no space left on device")
}
