package tree_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"

	"github.com/idvault/idvault/app/apptest/external"
)

// countingEcho is a stand-in server that "decrypts" each file to its own bytes (read whole,
// then sent) and counts the decrypt requests; before runs first on the n-th one (from 1).
func countingEcho(t *testing.T, before func(n int32)) (*exitclient.Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if before != nil {
			before(n)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(body)
	}, nil)
	return exitclient.New(srv.URL, token), &calls
}

func requireNoPartFile(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		require.False(t, strings.HasSuffix(path, outfiles.PartSuffix), "part file left: %s", path)
		return nil
	}))
}

// A full output disk stops the run at the first file that does not fit, with the disk's error
// naming the file, instead of failing every other file (each after the server decrypted it) as
// a stream cut by the server; once there is room, a rerun decrypts the rest, and every clear
// file is whole.
func TestDecryptStopsOnAFullDisk(t *testing.T) {
	in := t.TempDir()
	files := map[string][]byte{}
	const n = 12 // of 20 KiB each: 3 fit in 64 KiB
	for i := range n {
		name := filepath.Join("d", fmt.Sprintf("%02d.bin", i))
		files[name] = random(20 << 10)
		write(t, filepath.Join(in, name), files[name])
	}
	mnt := external.Tmpfs(t, "64k")
	out := filepath.Join(mnt, "clear")
	c, calls := countingEcho(t, nil)

	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	require.ErrorIs(t, err, syscall.ENOSPC)
	var oe *outfiles.OutputError
	require.ErrorAs(t, err, &oe)
	require.True(t, strings.HasPrefix(oe.Path, out+string(filepath.Separator)), "the error names the file under --out: %v", err)
	require.Empty(t, rep.Failures, "no file is reported as failed for the disk's sake")
	require.Positive(t, rep.Decrypted)
	require.Less(t, rep.Decrypted, n)
	require.Equal(t, int32(rep.Decrypted+1), calls.Load(), "no file is sent once the disk is full")
	requireNoPartFile(t, out)

	external.Remount(t, mnt, "size=1m")
	first := rep.Decrypted
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 3})
	require.NoError(t, err)
	require.Equal(t, first, rep.Skipped)
	require.Equal(t, n-first, rep.Decrypted)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%s: %d bytes, want %d", name, len(got), len(want))
	}
}

// An output file system turned read-only during the run stops it, as a full disk does.
func TestDecryptStopsOnAReadOnlyOutput(t *testing.T) {
	in := t.TempDir()
	for i := range 5 {
		write(t, filepath.Join(in, string(rune('a'+i))+".bin"), []byte("clear"))
	}
	mnt := external.Tmpfs(t, "1m")
	t.Cleanup(func() { external.Remount(t, mnt, "rw") })
	remounted := make(chan error, 1)
	c, calls := countingEcho(t, func(n int32) {
		if n == 3 { // in the server's goroutine: no t.Fatal here
			remounted <- exec.Command("mount", "-o", "remount,ro", mnt).Run()
		}
	})
	rep, err := tree.Decrypt(context.Background(), c, in, mnt, tree.Options{Jobs: 1})
	require.NoError(t, <-remounted)
	require.ErrorIs(t, err, syscall.EROFS)
	require.Empty(t, rep.Failures)
	require.Equal(t, 2, rep.Decrypted)
	require.Equal(t, int32(3), calls.Load())
}

// --out removed during the run (a cleanup script, an operator's rm -r) stops it: the files
// would be written into a directory nobody sees any more.
func TestDecryptStopsWhenTheOutputIsRemoved(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	for i := range 5 {
		write(t, filepath.Join(in, string(rune('a'+i))+".bin"), []byte("clear"))
	}
	c, calls := countingEcho(t, func(n int32) {
		if n == 2 {
			_ = os.RemoveAll(out)
		}
	})
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	var oe *outfiles.OutputError
	require.ErrorAs(t, err, &oe)
	require.ErrorContains(t, err, "the output directory was removed or replaced during the run")
	require.Empty(t, rep.Failures)
	require.Equal(t, 1, rep.Decrypted)
	require.Equal(t, int32(2), calls.Load())
}

// A clear file the output cannot take while it takes others (here, a name over the file
// system's 255 bytes once the age suffix is added) fails as output_failed, naming the disk's
// error, and the run goes on; it is not a "stream cut" nor a "client error".
func TestDecryptOutputFailedIsPerFile(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	long := strings.Repeat("n", 253)
	write(t, filepath.Join(in, long), []byte("clear"))
	write(t, filepath.Join(in, "short"), []byte("clear"))
	c, _ := countingEcho(t, nil)
	pass := func(w io.Writer) (io.WriteCloser, error) { return nopWriteCloser{w}, nil }
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1, Seal: pass, Suffix: ".age"})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
	require.Len(t, rep.Failures, 1)
	require.Equal(t, outfiles.CodeOutputFailed, rep.Failures[0].Code)
	require.Contains(t, rep.Failures[0].Message, "file name too long")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Files named with 243 to 255 bytes, whose part file could not carry the whole suffix, are
// decrypted to their names all the same (through a shortened part name); a part file a killed
// run left under that name is replaced, and a rerun skips them.
func TestDecryptLongNames(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	names := []string{strings.Repeat("n", 250), strings.Repeat("é", 127), strings.Repeat("m", 255)}
	for _, name := range names {
		write(t, filepath.Join(in, name), []byte("clear "+name[:1]))
	}
	stale := filepath.Join(out, outfiles.PartName(names[0]))
	write(t, stale, []byte("left by a killed run"))
	c, _ := countingEcho(t, nil)
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 2})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Equal(t, 3, rep.Decrypted)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.Equal(t, "clear "+name[:1], string(got))
		part := outfiles.PartName(name)
		require.LessOrEqual(t, len(part), 255)
		require.True(t, strings.HasSuffix(part, outfiles.PartSuffix))
	}
	require.NoFileExists(t, stale)
	requireNoPartFile(t, out)
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Skipped)
}

// cancelOnClose is a Seal that passes the bytes through and ends the run as the file is
// complete: the file is then renamed into place as the run ends.
type cancelOnClose struct {
	io.Writer
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error { c.cancel(); return nil }

// A file completed as the run is interrupted is counted as decrypted: the summary matches what
// is on disk, and a rerun finds it done.
func TestDecryptCountsAFileDoneAsTheRunEnds(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "a.bin"), []byte("clear a"))
	write(t, filepath.Join(in, "b.bin"), []byte("clear b"))
	c, _ := countingEcho(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := tree.Decrypt(ctx, c, in, out, tree.Options{Jobs: 1,
		Seal: func(w io.Writer) (io.WriteCloser, error) { return cancelOnClose{w, cancel}, nil }})
	require.ErrorIs(t, err, context.Canceled)
	require.FileExists(t, filepath.Join(out, "a.bin"))
	require.NoFileExists(t, filepath.Join(out, "b.bin"))
	require.Equal(t, 1, rep.Decrypted, "a.bin is on disk")
	require.Equal(t, int64(len("clear a")), rep.Bytes)

	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Skipped)
	require.Equal(t, 1, rep.Decrypted)
}

// outfiles.Tree.Write tells the disk's errors (*OutputError, naming the file) from the caller's.
func TestOutputTreeWriteTellsTheDiskFromTheCaller(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree, err := outfiles.OpenTree(dir)
	require.NoError(t, err)
	defer tree.Close()
	cut := errors.New("cut")
	err = tree.Write("f", func(io.Writer) error { return cut })
	require.Same(t, cut, err)
	require.NoError(t, os.RemoveAll(dir))
	err = tree.Write("f", func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
	var oe *outfiles.OutputError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, filepath.Join(dir, "f"), oe.Path)
}

// --out made unwritable during the run (chattr +i: refused even to root, as chmod is for
// anyone else) stops it, as a read-only file system does.
func TestDecryptStopsOnAnUnwritableOutput(t *testing.T) {
	external.Short(t, "chattr")
	in, out := t.TempDir(), t.TempDir()
	for i := range 5 {
		write(t, filepath.Join(in, string(rune('a'+i))+".bin"), []byte("clear"))
	}
	if err := exec.Command("chattr", "+i", out).Run(); err != nil {
		t.Skipf("chattr +i: %v (needs root and a file system that has it)", err)
	}
	require.NoError(t, exec.Command("chattr", "-i", out).Run())
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", out).Run() })
	locked := make(chan error, 1)
	c, calls := countingEcho(t, func(n int32) {
		if n == 3 {
			locked <- exec.Command("chattr", "+i", out).Run()
		}
	})
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	require.NoError(t, <-locked)
	require.ErrorIs(t, err, syscall.EPERM)
	require.Empty(t, rep.Failures)
	require.Equal(t, 2, rep.Decrypted)
	require.Equal(t, int32(3), calls.Load())
}
