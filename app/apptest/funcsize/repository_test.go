package funcsize_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/funcsize"
)

// maxLines is the longest a declared function of the repository's code (tests aside) may be:
// one a newcomer reads at once. A longer one is cut into named steps.
const maxLines = 60

// Every package of the repository, its declared functions and methods at most maxLines lines
// each (a function literal counts in the function that declares it).
func TestRepositoryFunctionsAreShort(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository's root")
	dirs := 0
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		dirs++
		for _, f := range funcsize.Over(funcsize.Pick(funcsize.Of(t, path), func(f funcsize.Func) bool { return !f.Literal }), maxLines) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s/%v (at most %d): cut it into named steps", rel, f, maxLines)
		}
		return nil
	}))
	require.Greater(t, dirs, 30, "the walk reached the repository's packages")
}
