package tree_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
)

// echoClient is the client of a stand-in server that "decrypts" a file to its own bytes.
func echoClient(t *testing.T) *exitclient.Client {
	t.Helper()
	srv := apptest.StandInExit(t, apptest.EchoDecrypt, nil)
	return exitclient.New(srv.URL, token)
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

// Clear data lands in files only the owner reads, in directories only the owner enters.
func TestDecryptModes(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "a", "clear")
	write(t, filepath.Join(in, "d", "e", "f.bin"), []byte("clear"))
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
	require.Equal(t, os.FileMode(0o700), mode(t, out))
	require.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(out)))
	require.Equal(t, os.FileMode(0o700), mode(t, filepath.Join(out, "d")))
	require.Equal(t, os.FileMode(0o700), mode(t, filepath.Join(out, "d", "e")))
	require.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(out, "d", "e", "f.bin")))
}

// A symlink planted at a part file's name, at a clear file's name or as a directory under
// --out is never followed: the file is reported, the target stays untouched, the others are
// decrypted.
func TestDecryptRefusesPlantedSymlinks(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	for _, rel := range []string{"a-part.bin", "b-final.bin", filepath.Join("c-dir", "x.bin"), "d-ok.bin", filepath.Join("e", "f", "deep.bin")} {
		write(t, filepath.Join(in, rel), []byte("clear bytes of "+rel))
	}
	victim := filepath.Join(elsewhere, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("untouched"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(out, "a-part.bin"+outfiles.PartSuffix)))
	require.NoError(t, os.Symlink(victim, filepath.Join(out, "b-final.bin")))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, "c-dir")))
	require.NoError(t, os.MkdirAll(filepath.Join(out, "e"), 0o700))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, "e", "f")))

	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 2})
	require.NoError(t, err)
	codes := map[string]string{}
	for _, f := range rep.Failures {
		codes[f.File] = f.Code
	}
	require.Equal(t, map[string]string{
		"a-part.bin": "unsafe_output", "b-final.bin": "unsafe_output",
		filepath.Join("c-dir", "x.bin"): "unsafe_output", filepath.Join("e", "f", "deep.bin"): "unsafe_output",
	}, codes)
	require.Equal(t, 1, rep.Decrypted)
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "untouched", string(got))
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written in a symlinked directory")
	require.Equal(t, os.FileMode(0o644), mode(t, victim))
	got, err = os.ReadFile(filepath.Join(out, "d-ok.bin"))
	require.NoError(t, err)
	require.Equal(t, "clear bytes of d-ok.bin", string(got))
	// The planted links are left as they are, for the operator to look at.
	st, err := os.Lstat(filepath.Join(out, "a-part.bin"+outfiles.PartSuffix))
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&os.ModeSymlink)
}

// A part file left by a killed run (a regular file) is replaced, not appended to or refused.
func TestDecryptReplacesStalePart(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "f.bin"), []byte("new"))
	require.NoError(t, os.WriteFile(filepath.Join(out, "f.bin"+outfiles.PartSuffix), []byte("stale and longer"), 0o600))
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
	got, err := os.ReadFile(filepath.Join(out, "f.bin"))
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	require.NoFileExists(t, filepath.Join(out, "f.bin"+outfiles.PartSuffix))
}

// --in and --out are judged resolved: --in through a symlink works; --out inside --in through
// a symlink, or around it, is refused before anything is written.
func TestDecryptResolvedPaths(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	base := t.TempDir()
	in := filepath.Join(base, "in")
	write(t, filepath.Join(in, "sub", "f.bin"), []byte("clear"))
	link := filepath.Join(base, "in-link")
	require.NoError(t, os.Symlink(in, link))

	rep, err := tree.Decrypt(context.Background(), c, link, filepath.Join(base, "out"), tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted, "--in given as a symlink to a directory is read")

	var cfg *exitclient.ConfigError
	for name, tc := range map[string]struct{ in, out string }{
		"out inside in through a link": {in, filepath.Join(link, "sub", "clear")},
		"out inside in-link":           {link, filepath.Join(in, "clear")},
		"out is in":                    {in, link},
		"in inside out":                {in, base},
		"in missing":                   {filepath.Join(base, "nope"), filepath.Join(base, "out2")},
		"in a file":                    {filepath.Join(in, "sub", "f.bin"), filepath.Join(base, "out3")},
	} {
		_, err := tree.Decrypt(context.Background(), c, tc.in, tc.out, tree.Options{})
		require.ErrorAs(t, err, &cfg, name)
	}
	require.NoDirExists(t, filepath.Join(in, "sub", "clear"))
	require.NoDirExists(t, filepath.Join(in, "clear"))
	require.NoDirExists(t, filepath.Join(base, "out2"))
	require.NoDirExists(t, filepath.Join(base, "out3"))
}

// outfiles.Tree.Write: a failed write leaves neither a part file nor a change to the clear file.
func TestOutputTreeWriteFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	tree, err := outfiles.OpenTree(dir)
	require.NoError(t, err)
	defer tree.Close()
	require.NoError(t, tree.Write(filepath.Join("a", "f"), func(w io.Writer) error {
		_, err := w.Write([]byte("first"))
		return err
	}))
	done, err := tree.Exists(filepath.Join("a", "f"))
	require.NoError(t, err)
	require.True(t, done)
	err = tree.Write(filepath.Join("a", "f"), func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("cut")
	})
	require.EqualError(t, err, "cut")
	got, err := os.ReadFile(filepath.Join(dir, "a", "f"))
	require.NoError(t, err)
	require.Equal(t, "first", string(got))
	require.NoFileExists(t, filepath.Join(dir, "a", "f"+outfiles.PartSuffix))
}

// Write never renames over something that is not a regular file: a symlink at the name (as
// --out /dev/stdout is one) stays, and so does what it points to; a directory stays.
func TestOutputTreeWriteKeepsWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "target")
	write(t, target, []byte("untouched"))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	tree, err := outfiles.OpenTree(dir)
	require.NoError(t, err)
	defer tree.Close()
	for _, name := range []string{"link", "sub"} {
		wrote := false
		err := tree.Write(name, func(w io.Writer) error { wrote = true; _, err := w.Write([]byte("clear")); return err })
		var unsafe *outfiles.UnsafeOutputError
		require.ErrorAs(t, err, &unsafe, name)
		require.False(t, wrote, "%s: refused before anything is written", name)
		require.NoFileExists(t, filepath.Join(dir, name+outfiles.PartSuffix))
	}
	fi, err := os.Lstat(filepath.Join(dir, "link"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the symlink stays")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "untouched", string(got))
	require.DirExists(t, filepath.Join(dir, "sub"))
}

// An entry under --in that is not a regular file (a symlink to a file outside, to a directory,
// a symlink loop, a named pipe) is never read and never silently left out: each is a failure
// with its own code, so the run's exit status says that not everything was decrypted.
func TestDecryptReportsNonRegularInputs(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	in, out, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "a.bin"), []byte("clear a"))
	outside := filepath.Join(elsewhere, "outside.bin")
	write(t, outside, []byte("clear outside"))
	write(t, filepath.Join(elsewhere, "dir", "deep.bin"), []byte("clear deep"))
	require.NoError(t, os.Symlink(outside, filepath.Join(in, "to-file.bin")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "dir"), filepath.Join(in, "to-dir")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(in, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(in, "loop2")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(in, "pipe"), 0o600))

	var last int
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Progress: func(done, total int, _ int64) {
		require.Equal(t, 6, total)
		last = max(last, done)
	}})
	require.NoError(t, err)
	require.Equal(t, 6, last, "the progress ends at its total")
	require.Equal(t, 6, rep.Total)
	require.Equal(t, 1, rep.Decrypted)
	codes := map[string]string{}
	for _, f := range rep.Failures {
		require.NotEmpty(t, f.Message)
		codes[f.File] = f.Code
	}
	nr := tree.CodeNotRegularFile
	require.Equal(t, map[string]string{"loop1": nr, "loop2": nr, "pipe": nr, "to-dir": nr, "to-file.bin": nr}, codes)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only a.bin is written")
}

// Two runs on the same --out at once would take each other's part files for ones left by a
// killed run, remove them, and rename half-written files over final names: the second run is
// refused before it writes anything, and the first ends as if alone.
func TestDecryptRefusesASecondRunOnTheSameOutput(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	var released sync.Once
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) { // only the first request waits
			close(started)
			<-release
		}
		apptest.EchoDecrypt(w, r)
	}, nil)
	free := func() { released.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server closes, even when the test fails
	c := exitclient.New(srv.URL, token)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	write(t, filepath.Join(in, "a.bin"), []byte("clear a"))

	firstRun := make(chan error, 1)
	go func() {
		rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
		if err == nil && rep.Decrypted != 1 {
			err = fmt.Errorf("first run: %+v", rep)
		}
		firstRun <- err
	}()
	<-started
	_, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	var cfg *exitclient.ConfigError
	require.ErrorAs(t, err, &cfg, "a second run on the same --out is refused")
	require.Contains(t, err.Error(), "in use by another exit decrypt")
	free()
	require.NoError(t, <-firstRun)
	got, err := os.ReadFile(filepath.Join(out, "a.bin"))
	require.NoError(t, err)
	require.Equal(t, "clear a", string(got))

	// Once the first run is over, the directory is free again.
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Skipped)
}

// A file under --in that is rewritten while it is sent (here, while the server answers 503)
// fails on its own account, input_changed, instead of being retried as if the server were
// down and then reported as connection_failed; one replaced by a symlink after the listing is
// not followed out of --in.
func TestDecryptInputChangingDuringTheRun(t *testing.T) {
	t.Parallel()
	in, out, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "a-grows.bin"), []byte("clear a"))
	write(t, filepath.Join(in, "b-swapped.bin"), []byte("clear b"))
	write(t, filepath.Join(in, "c-ok.bin"), []byte("clear c"))
	secret := filepath.Join(elsewhere, "secret")
	write(t, secret, []byte("outside --in"))
	var calls atomic.Int32
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 { // a-grows.bin, the first of the run (Jobs 1)
			f, err := os.OpenFile(filepath.Join(in, "a-grows.bin"), os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, _ = f.WriteString(" and more")
				f.Close()
			}
			swapped := filepath.Join(in, "b-swapped.bin")
			_ = os.Remove(swapped)
			_ = os.Symlink(secret, swapped)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		apptest.EchoDecrypt(w, r)
	}, nil)
	c := exitclient.New(srv.URL, token)
	c.Backoff = time.Millisecond
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	require.NoError(t, err)
	codes := map[string]string{}
	for _, f := range rep.Failures {
		codes[f.File] = f.Code
	}
	require.Equal(t, map[string]string{"a-grows.bin": "input_changed", "b-swapped.bin": tree.CodeNotRegularFile}, codes)
	require.Equal(t, 1, rep.Decrypted)
	_, err = os.Stat(filepath.Join(out, "b-swapped.bin"))
	require.True(t, os.IsNotExist(err), "what the symlink points to is not decrypted")

	// A rerun decrypts the file as it is now.
	require.NoError(t, os.Remove(filepath.Join(in, "b-swapped.bin")))
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
	got, err := os.ReadFile(filepath.Join(out, "a-grows.bin"))
	require.NoError(t, err)
	require.Equal(t, "clear a and more", string(got))
}

// A file written to while the server decrypts it (an app still writing its data directory) is
// input_changed, whatever the server made of the bytes it got: not a clear file of what the
// file no longer is, nor decryption_failed, which would read as tampered data. A rerun
// decrypts it as it is then.
func TestDecryptInputWrittenWhileDecrypted(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "a-answered.bin"), []byte("clear a"))
	write(t, filepath.Join(in, "b-refused.bin"), []byte("clear b"))
	var seen sync.Map
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		name := map[string]string{"clear a": "a-answered.bin", "clear b": "b-refused.bin"}[string(body)]
		if _, again := seen.LoadOrStore(name, true); name != "" && !again {
			f, err := os.OpenFile(filepath.Join(in, name), os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, _ = f.WriteString(" and more")
				f.Close()
			}
			if name == "b-refused.bin" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = io.WriteString(w, `{"error": {"code": "decryption_failed", "message": "cut short", "trace_id": "x"}}`)
				return
			}
		}
		_, _ = w.Write(body)
	}, nil)
	c := exitclient.New(srv.URL, token)
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	require.NoError(t, err)
	codes := map[string]string{}
	for _, f := range rep.Failures {
		codes[f.File] = f.Code
	}
	require.Equal(t, map[string]string{"a-answered.bin": "input_changed", "b-refused.bin": "input_changed"}, codes)
	require.NoFileExists(t, filepath.Join(out, "a-answered.bin"))

	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Decrypted)
	for _, name := range []string{"a-answered.bin", "b-refused.bin"} {
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.Equal(t, "clear "+name[:1]+" and more", string(got))
	}
}
