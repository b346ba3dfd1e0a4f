package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/exitclient/outfiles"
)

// --errors is written as --out is: a symlink planted at its name (in a shared directory) is
// refused with exit 2 naming it, and its target is left as it was, as is one planted at its
// part file's name; a file planted with mode 0666 is replaced by a new 0600 file once the run
// is complete. With --key each line names the record's key too.
func TestExitDecryptRecordsErrorsFileIsSafe(t *testing.T) {
	t.Parallel()
	_, _, url := clitest.ExitWithOneUser(t)
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	target := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(target, []byte("keep me\n"), 0o644))
	in := filepath.Join(dir, "in.csv")
	require.NoError(t, os.WriteFile(in, []byte("id,v\n41,not base64!\n42,\n"), 0o600))
	args := func(errs string) []string {
		return []string{"exit", "decrypt-records", "--url", url, "--in", in, "--out", "-", "--field", "v", "--key", "id", "--errors", errs}
	}

	link := filepath.Join(shared, "errors.jsonl")
	require.NoError(t, os.Symlink(target, link))
	out, errOut, code := clitest.RunRecords(t, "", args(link)...)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "--errors")
	require.Contains(t, errOut, link)
	require.Contains(t, errOut, "not a regular file")
	require.NotContains(t, out, "41,", "no record is written")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep me\n", string(got), "the symlink's target is unchanged")

	// A symlink at the part file's name is not followed either.
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(target, link+outfiles.PartSuffix))
	out, errOut, code = clitest.RunRecords(t, "", args(link)...)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "refusing to write")
	require.Contains(t, errOut, "errors.jsonl"+outfiles.PartSuffix)
	require.NotContains(t, out, "41,")
	got, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep me\n", string(got))
	require.NoFileExists(t, link)
	require.NoError(t, os.Remove(link+outfiles.PartSuffix))

	// A file planted world-writable: the run's list replaces it, 0600.
	require.NoError(t, os.WriteFile(link, []byte("planted\n"), 0o666))
	require.NoError(t, os.Chmod(link, 0o666))
	out, errOut, code = clitest.RunRecords(t, "", args(link)...)
	require.Equal(t, 1, code, errOut)
	require.Equal(t, "id,v\n41,not base64!\n42,\n", out)
	st, err := os.Lstat(link)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	got, err = os.ReadFile(link)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(got), `{"record":1,"key":"41","field":"v","code":"invalid_encoding"`), "%s", got)
	require.Equal(t, 1, strings.Count(string(got), "\n"))
}
