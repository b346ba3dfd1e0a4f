package tree_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
)

// dirSyncs records the directories synced through outfiles.Tree until the test ends (the hook is
// global: these tests are not parallel).
type dirSyncs struct {
	mu     sync.Mutex
	synced []os.FileInfo
	fail   error // returned by every sync when set
}

func watchDirSyncs(t *testing.T) *dirSyncs {
	w := &dirSyncs{}
	t.Cleanup(outfiles.WatchDirSyncs(func(f *os.File) error {
		st, err := f.Stat()
		require.NoError(t, err)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.synced = append(w.synced, st)
		return w.fail
	}))
	return w
}

// times is how many times dir was synced.
func (w *dirSyncs) times(t *testing.T, dir string) int {
	t.Helper()
	st, err := os.Stat(dir)
	require.NoError(t, err)
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.synced {
		if os.SameFile(s, st) {
			n++
		}
	}
	return n
}

// A clear file's name, and the names of the directories made for it, survive a power loss
// once the run has reported: every directory in which the run gave a name is synced, once,
// including the parents of the output directories it made; a rerun that writes nothing syncs
// nothing.
func TestDecryptSyncsTheDirectoriesItNamedIn(t *testing.T) {
	c := echoClient(t)
	base := t.TempDir()
	in, out := t.TempDir(), filepath.Join(base, "new1", "new2", "clear")
	for _, rel := range []string{"top.bin", filepath.Join("d", "e", "f.bin"), filepath.Join("d", "g.bin")} {
		write(t, filepath.Join(in, rel), []byte("clear "+rel))
	}
	w := watchDirSyncs(t)
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Decrypted)
	for _, dir := range []string{
		out, filepath.Join(out, "d"), filepath.Join(out, "d", "e"), // renamed into, or made in
		filepath.Join(base, "new1", "new2"), filepath.Join(base, "new1"), base, // made by the run
	} {
		require.Equal(t, 1, w.times(t, dir), "%s synced once", dir)
	}
	require.Len(t, w.synced, 6, "no other directory synced")

	w.synced = nil
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Skipped)
	require.Empty(t, w.synced, "nothing renamed, nothing to sync")
}

// A directory that cannot be synced fails the run with the disk's error naming it (the files
// are written, but the operator must not act on a run whose names may not survive); a file
// system that cannot sync directories at all (EINVAL) is not an error.
func TestDecryptDirectorySyncFailure(t *testing.T) {
	c := echoClient(t)
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "f.bin"), []byte("clear"))
	w := watchDirSyncs(t)
	w.fail = syscall.EIO
	_, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	var oe *outfiles.OutputError
	require.ErrorAs(t, err, &oe)
	require.True(t, errors.Is(err, syscall.EIO))
	require.Contains(t, err.Error(), out)

	w.fail = syscall.EINVAL
	in2 := t.TempDir()
	write(t, filepath.Join(in2, "g.bin"), []byte("clear"))
	rep, err := tree.Decrypt(context.Background(), c, in2, t.TempDir(), tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
}

// A single output written through the tree (decrypt-records' file) is durable after Sync.
func TestOutputTreeSyncAfterOneFile(t *testing.T) {
	dir := t.TempDir()
	tree, err := outfiles.OpenTree(dir)
	require.NoError(t, err)
	defer tree.Close()
	w := watchDirSyncs(t)
	require.NoError(t, tree.Write("records.csv", func(wr io.Writer) error { _, err := wr.Write([]byte("a,b\n")); return err }))
	require.Empty(t, w.synced, "Write alone does not sync the directory")
	require.NoError(t, tree.Sync())
	require.Equal(t, 1, w.times(t, dir))
}

// A directory removed after files were written in it fails Sync, naming it: its files are gone.
func TestOutputTreeSyncNamesARemovedDirectory(t *testing.T) {
	dir := t.TempDir()
	tree, err := outfiles.OpenTree(dir)
	require.NoError(t, err)
	defer tree.Close()
	require.NoError(t, tree.Write(filepath.Join("sub", "f.bin"), func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "sub")))
	err = tree.Sync()
	var oe *outfiles.OutputError
	require.ErrorAs(t, err, &oe)
	require.Contains(t, err.Error(), filepath.Join(dir, "sub"))
	require.Contains(t, err.Error(), "removed during the run")
}
