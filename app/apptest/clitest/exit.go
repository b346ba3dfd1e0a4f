package clitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
)

// ExitWithOneUser serves an exit server over an in-memory key database holding one user,
// whose identity is imported; it returns the database, the user's identity and the URL.
func ExitWithOneUser(t testing.TB) (*exitfake.DB, string, string) {
	t.Helper()
	db := exitfake.New()
	who, _ := db.AddUser()
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{}))
	_, err := exitclient.New(url, "").Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	return db, who, url
}

// WriteFiles writes n small files f00.bin, f01.bin, ... into dir.
func WriteFiles(t testing.TB, dir string, n int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.bin", i)), []byte(fmt.Sprintf("file %d", i)), 0o600))
	}
}

// OneLine requires s to be exactly one line.
func OneLine(t testing.TB, s string) {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, "\n"), "one message: %q", s)
	require.True(t, strings.HasSuffix(s, "\n"), "%q", s)
}

// RequireInterrupted requires a decrypt of the 6 files of WriteFiles, interrupted after 2 of
// them (apptest.HangingDecrypt(t, 2)): exit code 130, one line saying so, the files done and
// no part file in out.
func RequireInterrupted(t testing.TB, out, stdout, errOut string, code int) {
	t.Helper()
	require.Equal(t, 130, code, "%s %s", stdout, errOut)
	OneLine(t, errOut)
	require.Contains(t, errOut, "interrupted: 6 files: 2 decrypted")
	require.Contains(t, errOut, "4 not done; rerun to continue")
	require.NotContains(t, errOut, "context")
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"f00.bin", "f01.bin"}, names, "the files done, no part file")
}
