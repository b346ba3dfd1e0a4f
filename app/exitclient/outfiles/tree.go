// Package outfiles writes clear files safely under an output directory, for every command
// that writes clear data: no symlink followed, mode 0600 in 0700 directories, each file through
// a part file renamed into place, directories synced before a run reports, one run at a time
// per directory (Lock), names that cannot collide (CheckNames), and the age sealing that keeps
// clear bytes off the disk (AgeWriter, AgeSeal). It knows nothing of the exit server.
package outfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
)

// PartSuffix ends the temporary name a clear file is written under until it is complete.
const PartSuffix = ".idvault-part"

// CodeOutputFailed is the failure code of a file whose clear file could not be written (an
// *OutputError that does not stop the run, such as a name too long for the output's file system).
const CodeOutputFailed = "output_failed"

// Tree is a directory that clear files are written under safely, for every command that
// writes clear data: the directory and every one below it are created with mode 0700 when
// missing; a directory under it that is a symlink is never followed, nor is a symlink at a
// file's name or its part file's name (each is an *UnsafeOutputError); a file is written to a
// new part file (O_CREAT|O_EXCL, no symlink followed, mode 0600) named name+PartSuffix (PartName),
// synced, then renamed, so that a partial file never sits under a final name. Safe for concurrent use
// on different names.
//
// A name given (a rename, a directory made) is durable only once its directory is synced too:
// the tree remembers every directory it changed, and Sync syncs each once. The commands call
// Sync before they report, so a file counted as written survives a power loss; syncing once
// per directory at the end rather than after each file keeps a run of many small files from
// paying a second sync per file.
//
// Every failure to write under the directory (a full disk, a read-only file system, the
// directory removed during the run) is an *OutputError naming the file.
type Tree struct {
	root *os.Root
	path string // the directory as opened, for messages and to notice it removed

	mu    sync.Mutex
	dirty map[string]bool // directories (relative, "." for the root) with a name not yet synced
	// created lists the directories OpenTree made, deepest first: the entry of each in
	// its parent is synced with the rest.
	created []string
}

// syncDirHook, when set, syncs an open directory in place of its Sync (tests watch the calls).
var syncDirHook atomic.Pointer[func(*os.File) error]

// WatchDirSyncs is for tests: it calls f for each directory a Tree syncs, in place of the sync,
// until the returned function is called. Not for parallel tests.
func WatchDirSyncs(f func(*os.File) error) (restore func()) {
	syncDirHook.Store(&f)
	return func() { syncDirHook.Store(nil) }
}

// OpenTree creates dir (mode 0700, parents too) when missing and opens it. The caller
// resolves dir first if it must judge it (filepath.EvalSymlinks): dir itself may be a symlink.
func OpenTree(dir string) (*Tree, error) {
	var created []string // the missing ones, deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Tree{root: root, path: dir, dirty: map[string]bool{}, created: created}, nil
}

// changed notes that a name in the directory rel (relative to the tree) was given.
func (t *Tree) changed(rel string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirty[filepath.Clean(rel)] = true
}

// Sync syncs every directory in which the tree gave a name since the last Sync (the files'
// own data is synced as each is written), and the parents of the directories OpenTree
// made: after it returns, every file written survives a power loss under its final name. A
// file system that cannot sync a directory (EINVAL) is taken as one where names need no sync.
// An error is an *OutputError naming the directory.
func (t *Tree) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	rels := make([]string, 0, len(t.dirty))
	for rel := range t.dirty {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		dir, err := t.dir(rel, false)
		if err == nil && dir == nil {
			// Removed since a file was written in it: those files are gone too.
			return &OutputError{Path: filepath.Join(t.path, rel), Err: errDirRemoved, stops: true}
		}
		if err == nil {
			err = t.syncRoot(dir)
			if dir != t.root {
				dir.Close()
			}
		}
		if err != nil {
			return t.outputErr(rel, err)
		}
		delete(t.dirty, rel)
	}
	for len(t.created) > 0 {
		parent := filepath.Dir(t.created[0])
		f, err := os.Open(parent)
		if err == nil {
			err = t.syncOpen(f)
			f.Close()
		}
		if err != nil {
			return &OutputError{Path: parent, Err: BareErr(err), stops: true}
		}
		t.created = t.created[1:]
	}
	return nil
}

// syncRoot syncs the directory dir is opened on.
func (t *Tree) syncRoot(dir *os.Root) error {
	f, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	return t.syncOpen(f)
}

func (t *Tree) syncOpen(f *os.File) error {
	sync := (*os.File).Sync
	if h := syncDirHook.Load(); h != nil {
		sync = *h
	}
	if err := sync(f); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// Close releases the tree's directory.
func (t *Tree) Close() error { return t.root.Close() }

// Exists reports whether rel (a relative path under the tree) is a regular file already (a
// clear file of an earlier run). A symlink or anything else at rel or on its way is an
// *UnsafeOutputError.
func (t *Tree) Exists(rel string) (bool, error) {
	dirRel, name := filepath.Split(rel)
	dir, err := t.dir(dirRel, false)
	if err != nil {
		return false, t.outputErr(rel, err)
	}
	if dir == nil {
		return false, nil
	}
	if dir != t.root {
		defer dir.Close()
	}
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, t.outputErr(rel, err)
	case fi.Mode().IsRegular():
		return true, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, &UnsafeOutputError{Path: rel, Reason: "a symlink sits at the clear file's name (not followed)"}
	}
	return false, &UnsafeOutputError{Path: rel, Reason: "something that is not a regular file sits at the clear file's name"}
}

// Write writes rel (a relative path under the tree) with write, through its part file: the
// part is created new, filled by write, synced, closed, then renamed to rel (replacing a file
// there; anything else than a regular file at rel is refused). On any error the part file is
// removed and rel is left as it was. A regular part file left by a killed run is replaced;
// anything else at the part's name is refused.
func (t *Tree) Write(rel string, write func(io.Writer) error) error {
	dirRel, name := filepath.Split(rel)
	dir, err := t.dir(dirRel, true)
	if err != nil {
		return t.outputErr(rel, err)
	}
	if dir != t.root {
		defer dir.Close()
	}
	if fi, err := dir.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		// Renaming over it would replace a symlink (--out /dev/stdout), a device or a
		// directory's name with the file.
		return &UnsafeOutputError{Path: rel, Reason: "something that is not a regular file sits at the file's name (not replaced)"}
	}
	part := PartName(name)
	if fi, err := dir.Lstat(part); err == nil {
		if !fi.Mode().IsRegular() {
			return &UnsafeOutputError{Path: filepath.Join(dirRel, part), Reason: "a symlink or other non-regular file sits at the part file's name (not followed, not removed)"}
		}
		if err := dir.Remove(part); err != nil { // left by a killed run
			return t.outputErr(rel, err)
		}
	}
	// O_EXCL: a new file or nothing. os.Root adds O_NOFOLLOW and never follows a symlink with
	// O_CREATE|O_EXCL, so a symlink planted at this name since the check above is refused too.
	f, err := dir.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return &UnsafeOutputError{Path: filepath.Join(dirRel, part), Reason: "something appeared at the part file's name (not followed)"}
	}
	if err != nil {
		return t.outputErr(rel, err)
	}
	// Only Write (no ReadFrom shortcut around the caller's buffer); its errors are the disk's,
	// told apart from the caller's own (a stream cut) as *OutputError.
	err = write(&outputFile{f: f, t: t, rel: rel})
	if err == nil {
		if err = f.Sync(); err != nil {
			err = t.outputErr(rel, err)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = t.outputErr(rel, cerr)
	}
	if err == nil {
		if err = dir.Rename(part, name); err != nil {
			err = t.outputErr(rel, err)
		} else {
			t.changed(dirRel)
		}
	}
	if err != nil {
		_ = dir.Remove(part)
	}
	return err
}

// outputFile is a part file being written: its write errors are *OutputError.
type outputFile struct {
	f   *os.File
	t   *Tree
	rel string
}

func (o *outputFile) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil {
		err = o.t.outputErr(o.rel, err)
	}
	return n, err
}

// dir opens the directory rel under the tree one component at a time, never following a
// symlink: a component that is a symlink or not a directory is an *UnsafeOutputError. With
// create, missing components are made with mode 0700; without, a missing one returns nil, nil.
// The caller closes the returned root unless it is t.root.
func (t *Tree) dir(rel string, create bool) (*os.Root, error) {
	cur := t.root
	done := ""
	fail := func(err error) (*os.Root, error) {
		if cur != t.root {
			cur.Close()
		}
		return nil, err
	}
	for _, comp := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		if comp == "." || comp == "" {
			continue
		}
		done = filepath.Join(done, comp)
		fi, err := cur.Lstat(comp)
		if errors.Is(err, fs.ErrNotExist) {
			if !create {
				return fail(nil)
			}
			if err = cur.Mkdir(comp, 0o700); err == nil {
				t.changed(filepath.Dir(done)) // its name is in its parent
			}
			if err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.Lstat(comp)
			}
		}
		if err != nil {
			return fail(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fail(&UnsafeOutputError{Path: done, Reason: "it is a symlink, and directories under the output directory are not followed"})
		}
		if !fi.IsDir() {
			return fail(&UnsafeOutputError{Path: done, Reason: "it is not a directory"})
		}
		sub, err := cur.OpenRoot(comp)
		if err != nil {
			return fail(err)
		}
		if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
			sub.Close()
			return fail(&UnsafeOutputError{Path: done, Reason: "it changed while being opened"})
		}
		if cur != t.root {
			cur.Close()
		}
		cur = sub
	}
	return cur, nil
}

// UnsafeOutputError refuses to write a clear file where a symlink or something else than a
// regular file or directory sits on its path under the output directory.
type UnsafeOutputError struct {
	Path   string // relative to the output directory
	Reason string
}

func (e *UnsafeOutputError) Error() string {
	return fmt.Sprintf("refusing to write under %q: %s", e.Path, e.Reason)
}

// FailureCode is the code of the file's failure in a report.
func (e *UnsafeOutputError) FailureCode() string { return "unsafe_output" }

// OutputError is a failure of the output side, not of the server nor of the input: writing,
// syncing or renaming a file under the output directory, or making a directory there. Its
// message names the file, so the operator sees which disk failed.
type OutputError struct {
	Path string // the file's path: the output directory joined with its relative name
	Err  error  // the system's error (no space left on device, read-only file system...)
	// stops is set when no other file can be written either: the disk or the quota is full,
	// the file system is read-only, a permission is refused (the tree made read-only, or
	// immutable), the device reports an I/O error, or the output directory was removed or
	// replaced.
	stops bool
}

func (e *OutputError) Error() string { return fmt.Sprintf("write %q: %v", e.Path, e.Err) }

func (e *OutputError) Unwrap() error { return e.Err }

// FailureCode is the code of the file's failure in a report.
func (e *OutputError) FailureCode() string { return CodeOutputFailed }

// StopsRun reports whether no other file can be written either, so that the run stops.
func (e *OutputError) StopsRun() bool { return e.stops }

// errDirRemoved is the cause of an *OutputError from Sync for a directory under the tree that
// was removed after files were written in it.
var errDirRemoved = errors.New("the directory was removed during the run, with the files written in it")

// errOutputGone is the cause of an *OutputError once the output directory is no longer where
// the run opened it.
var errOutputGone = errors.New("the output directory was removed or replaced during the run")

// outputErr wraps err, met while writing rel, as an *OutputError (an *UnsafeOutputError and an
// *OutputError pass as they are).
func (t *Tree) outputErr(rel string, err error) error {
	if errors.As(err, new(*UnsafeOutputError)) || errors.As(err, new(*OutputError)) {
		return err
	}
	oe := &OutputError{Path: filepath.Join(t.path, rel), Err: BareErr(err)}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EIO):
		// The tree is the run's own (mode 0700): a permission refused is someone's change to
		// it, which every later file would meet too. An I/O error is the device failing: going
		// on would have the server decrypt every other file for a disk that loses them.
		oe.stops = true
	case t.gone():
		oe.Err, oe.stops = fmt.Errorf("%w (%v)", errOutputGone, oe.Err), true
	}
	return oe
}

// gone reports whether the tree's directory is no longer at its path (removed, or replaced by
// another): whatever is written through the tree then lands nowhere the operator will look.
func (t *Tree) gone() bool {
	open, err := t.root.Stat(".")
	if err != nil {
		return true
	}
	now, err := os.Stat(t.path)
	return err != nil || !os.SameFile(open, now)
}

// maxName is the longest file name the usual file systems take (NAME_MAX, in bytes).
const maxName = 255

// PartName is the part file's name for the file name: name+PartSuffix, or, when that is
// longer than a file name may be, name cut to fit (at a UTF-8 boundary) with a hash of the
// whole name before PartSuffix, so that a file named with 243 to 255 bytes is written too. It
// ends in PartSuffix either way, as no output's name does (CheckNames), and is the same
// on every run, so that a rerun finds the part file a killed run left.
func PartName(name string) string {
	if len(name)+len(PartSuffix) <= maxName {
		return name + PartSuffix
	}
	sum := sha256.Sum256([]byte(name))
	tag := "~" + hex.EncodeToString(sum[:8])
	keep := maxName - len(PartSuffix) - len(tag)
	for keep > 0 && !utf8.RuneStart(name[keep]) {
		keep--
	}
	return name[:keep] + tag + PartSuffix
}

// BareErr is err without the path an *fs.PathError repeats (the caller names it, quoted).
func BareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
