// Package tree decrypts a directory tree of ciphertext files (`idvault exit decrypt`): every
// file is sent to the exit server and its clear bytes written at the same relative path under
// the output directory (through outfiles), resumably, with a report of every failure by file
// and code.
package tree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
)

// Options tunes Decrypt.
type Options struct {
	// Jobs is the number of files decrypted at once (default 4).
	Jobs int
	// Progress, when set, is called after each file with the files handled so far (done,
	// skipped or failed), the total, and the encrypted bytes handled so far; one call at a
	// time.
	Progress func(done, total int, bytes int64)
	// Seal, when set, wraps each output file's writer (outfiles.AgeWriter: an age file to recipients),
	// and the file is named with Suffix added (outfiles.AgeSuffix): the clear bytes never reach the disk,
	// not even in a part file. A run is resumable on the names with the suffix.
	Seal   func(io.Writer) (io.WriteCloser, error)
	Suffix string
	// ExactNames says the output volume tells apart names that differ only by case or Unicode
	// normalisation (Linux's usual file systems), so inputs named so are not refused; macOS's
	// default volumes fold both, and there the second such file would never be decrypted.
	ExactNames bool
}

// Report is the outcome of Decrypt.
type Report struct {
	Total     int
	Decrypted int
	// Skipped files already had their clear file from an earlier run.
	Skipped  int
	Failures []Failure
	// Bytes is the encrypted size of the files decrypted in this run.
	Bytes int64
}

// Failure is one file that could not be decrypted.
type Failure struct {
	File    string // path relative to the input directory
	Code    string // the server's error code, or connection_failed, stream_aborted, unsafe_output, output_failed, not_regular_file, input_changed, client_error
	Message string
}

// Decrypt mirrors, through the exit server c, every regular file under in into a clear file at the same relative path
// under out; any other entry (a symlink, a pipe...) is a failure, CodeNotRegularFile. It first checks the paths and probes the server (c.Probe), and touches no file
// before both pass: a bad path, URL or token is a *ConfigError.
//
// Paths are judged resolved (filepath.EvalSymlinks): in may be a symlink to a directory, and
// out may be neither inside in nor around it. out is created 0700 when missing, and so is every
// directory below it; a directory under out that is a symlink is never followed (the file is
// reported as unsafe_output), nor is a symlink at a clear file's name or its part file's.
//
// It is resumable: a file whose clear file exists is skipped; a clear file is written to a new
// file (O_CREAT|O_EXCL, no symlink followed, mode 0600) under a temporary name (outfiles.PartSuffix) in
// its directory, synced, then renamed, so a killed run never leaves a partial file under a
// final name (a part file left by a killed run is removed when its file is decrypted again).
// Failures are reported per file, never stop the others, and leave no output.
//
// Inputs whose outputs would collide under out are refused up front, a *ConfigError naming
// them, before out is created (outfiles.CheckNames): a name ending in outfiles.PartSuffix.
//
// One run at a time writes to out: a second one is refused with a *ConfigError while the first
// holds its lock (outfiles.Lock).
//
// The run stops, returning the report so far with the error, when the tree cannot be listed,
// the client's retry budget trips (*exitclient.UnavailableError: the server is gone), the token
// stops being accepted (*exitclient.ConfigError), no file can be written under out any more
// (*outfiles.OutputError: the
// disk or quota is full, the file system read-only, out removed; the file being written is
// not done, and a rerun once it is fixed goes on), or ctx ends (ctx.Err(); files in flight are dropped with their
// part files).
func Decrypt(ctx context.Context, c *exitclient.Client, in, out string, opts Options) (Report, error) {
	var rep Report
	inDir, outDir, err := decryptPaths(in, out)
	if err != nil {
		return rep, err
	}
	if err := c.Probe(ctx); err != nil {
		return rep, err
	}
	files, notRegular, err := listInputs(inDir)
	if err != nil {
		return rep, fmt.Errorf("decrypt: list %q: %w", in, err)
	}
	rep.Failures = notRegular
	if err := outfiles.CheckNames(files, opts.Suffix, opts.ExactNames); err != nil {
		return rep, &exitclient.ConfigError{Msg: err.Error()}
	}
	rep.Total = len(files) + len(rep.Failures)
	tree, err := outfiles.OpenTree(outDir)
	if err != nil {
		return rep, fmt.Errorf("decrypt: %q: %w", out, outfiles.BareErr(err))
	}
	defer tree.Close()
	unlock, err := lock(outDir, out)
	if err != nil {
		return rep, err
	}
	defer unlock()
	runErr := decryptAll(ctx, c, tree, inDir, files, opts, &rep)
	sort.Slice(rep.Failures, func(i, j int) bool { return rep.Failures[i].File < rep.Failures[j].File })
	// The names given are made durable before the run reports them (also for a run stopped
	// early: what it counts as written is there after a power loss).
	if err := tree.Sync(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return rep, runErr
	}
	return rep, ctx.Err()
}

// listInputs lists the regular files under inDir (relative, sorted), and reports every other
// entry but directories as a failure, CodeNotRegularFile.
func listInputs(inDir string) (files []string, notRegular []Failure, err error) {
	err = filepath.WalkDir(inDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(inDir, path)
		switch {
		case d.Type().IsRegular():
			files = append(files, rel)
		case !d.IsDir():
			// Never read, and never silently left out: a symlink may point anywhere (a loop,
			// a file of another tree), a pipe or a device has no end.
			notRegular = append(notRegular, Failure{File: rel, Code: CodeNotRegularFile, Message: NotRegularReason(d.Type())})
		}
		return nil
	})
	sort.Strings(files)
	return files, notRegular, err
}

// decryptAll decrypts files (relative to inDir) into tree, opts.Jobs at a time, counting each
// in rep; it returns the error that stopped the run (nil when it went to its end or ctx ended).
func decryptAll(ctx context.Context, c *exitclient.Client, tree *outfiles.Tree, inDir string, files []string, opts Options, rep *Report) error {
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 4
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu      sync.Mutex
		handled = len(rep.Failures)
		runErr  error
		bytes   atomic.Int64
	)
	finish := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
		handled++
		if opts.Progress != nil {
			opts.Progress(handled, rep.Total, bytes.Load())
		}
	}
	exitclient.InParallel(runCtx, jobs, files, func(rel string) {
		if runCtx.Err() != nil {
			return // the run is over: the file is not started
		}
		n, skipped, err := decryptFile(runCtx, c, tree, filepath.Join(inDir, rel), rel+opts.Suffix, opts.Seal)
		switch {
		case err == nil && skipped:
			finish(func() { rep.Skipped++ })
		case err == nil:
			// Counted even when the run ended meanwhile: the clear file is in place.
			bytes.Add(n)
			finish(func() { rep.Decrypted++; rep.Bytes += n })
		case runCtx.Err() != nil:
			return // the run is over: the file is neither done nor failed
		case exitclient.StopsRun(err):
			mu.Lock()
			if runErr == nil {
				runErr = err
			}
			mu.Unlock()
			stop()
		default:
			finish(func() {
				rep.Failures = append(rep.Failures, Failure{File: rel, Code: exitclient.Code(err), Message: err.Error()})
			})
		}
	})
	return runErr
}

// notRegularError is a file that stopped being a regular file after the listing (replaced by
// a symlink or a pipe): CodeNotRegularFile.
type notRegularError struct{ reason string }

func (e *notRegularError) Error() string { return e.reason }

// FailureCode is the code of the file's failure in a report.
func (e *notRegularError) FailureCode() string { return CodeNotRegularFile }

// CodeNotRegularFile is the failure code of an entry under the input directory that is neither
// a regular file nor a directory (a symlink, a named pipe, a socket, a device): it is not read.
const CodeNotRegularFile = "not_regular_file"

// NotRegularReason says why an entry of type t under the input directory is not read.
func NotRegularReason(t fs.FileMode) string {
	if t&fs.ModeSymlink != 0 {
		return "a symbolic link, not followed: put what it points to under the input directory instead"
	}
	return fmt.Sprintf("not a regular file (%s), not read", t.Type())
}

// decryptPaths resolves in and out and checks them without writing anything: in is an
// existing directory (through symlinks), out is not inside in nor around it, and out, when it
// exists, is a directory. It returns the resolved paths.
func decryptPaths(in, out string) (string, string, error) {
	inAbs, err := filepath.Abs(in)
	if err != nil {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--in %q: %v", in, err)}
	}
	inDir, err := filepath.EvalSymlinks(inAbs)
	if err != nil {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--in %q: %v", in, outfiles.BareErr(err))}
	}
	if st, err := os.Stat(inDir); err != nil || !st.IsDir() {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--in %q is not a directory", in)}
	}
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--out %q: %v", out, err)}
	}
	outDir, err := resolveExisting(outAbs)
	if err != nil {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--out %q: %v", out, outfiles.BareErr(err))}
	}
	if within(outDir, inDir) {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--out %q is inside --in %q (resolved: %q in %q); choose an output directory outside the input", out, in, outDir, inDir)}
	}
	if within(inDir, outDir) {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--in %q is inside --out %q (resolved: %q in %q); choose an output directory outside the input", in, out, inDir, outDir)}
	}
	if st, err := os.Stat(outDir); err == nil && !st.IsDir() {
		return "", "", &exitclient.ConfigError{Msg: fmt.Sprintf("--out %q exists and is not a directory", out)}
	}
	return inDir, outDir, nil
}

// resolveExisting is path with its longest existing prefix resolved through symlinks (the rest
// does not exist yet, so it holds none).
func resolveExisting(path string) (string, error) {
	rest := ""
	for cur := path; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path is dir or below it (both clean and absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// decryptFile posts src and writes the clear bytes to rel in tree. It returns the encrypted
// size sent, or skipped when the clear file exists already.
func decryptFile(ctx context.Context, c *exitclient.Client, tree *outfiles.Tree, src, rel string, seal func(io.Writer) (io.WriteCloser, error)) (n int64, skipped bool, err error) {
	if done, err := tree.Exists(rel); done || err != nil {
		return 0, done, err
	}
	f, st, err := openInput(src)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	changed := func() bool {
		now, err := f.Stat()
		return err != nil || now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime())
	}
	resp, err := postInput(ctx, c, f, st.Size(), changed)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	err = tree.Write(rel, func(w io.Writer) error { return writeClear(ctx, w, resp.Body, seal, changed) })
	if err != nil {
		return 0, false, err
	}
	return st.Size(), false, nil
}

// openInput opens the input file src once, without following a symlink (one may have replaced
// the file since the listing) and without blocking on a named pipe, and checks that it is a
// regular file: every attempt to send it reads this same file. It returns the file with its
// state as opened.
func openInput(src string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, &notRegularError{reason: NotRegularReason(fs.ModeSymlink)}
	}
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &notRegularError{reason: NotRegularReason(st.Mode().Type())}
	}
	return f, st, nil
}

// postInput sends the size bytes of f to the exit server c (POST /v1/decrypt, retried as c.Do
// retries) and returns its answer, whose body streams the clear bytes. changed reports whether
// f was written to since it was opened: such a file fails, exitclient.ErrInputChanged.
func postInput(ctx context.Context, c *exitclient.Client, f *os.File, size int64, changed func() bool) (*http.Response, error) {
	resp, err := c.Do(ctx, func() (*http.Request, error) {
		// A file written to meanwhile would be sent with another length than announced, a
		// transport error retried as if the server were down: it fails on its own account.
		if changed() {
			return nil, exitclient.ErrInputChanged
		}
		req, err := http.NewRequest(http.MethodPost, c.URL+"/v1/decrypt", io.NopCloser(io.NewSectionReader(f, 0, size)))
		if err != nil {
			return nil, err
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/octet-stream")
		return req, nil
	})
	if errors.As(err, new(*exitclient.APIError)) && changed() {
		// Written to while it was sent: the server judged bytes that are neither the old
		// file nor the new one (a file still being written reads as cut short, not as bad).
		return nil, exitclient.ErrInputChanged
	}
	return resp, err
}

// writeClear copies the clear bytes of body to w, the output file's writer, through seal when
// set. A stream cut short is exitclient.ErrStreamAborted, or exitclient.ErrInputChanged when
// the input changed meanwhile (changed); a write error (the disk's) and the run's end are
// returned as they are.
func writeClear(ctx context.Context, w io.Writer, body io.Reader, seal func(io.Writer) (io.WriteCloser, error), changed func() bool) error {
	var sealer io.WriteCloser
	if seal != nil {
		var err error
		if sealer, err = seal(w); err != nil {
			return err
		}
		w = struct{ io.Writer }{sealer}
	}
	_, err := io.CopyBuffer(w, body, make([]byte, 256<<10))
	switch {
	case ctx.Err() != nil, errors.As(err, new(*outfiles.OutputError)):
		// The run ended, or the disk failed (a write error is the disk's, not the stream's).
	case changed():
		err = exitclient.ErrInputChanged // the clear bytes are of what was sent, no longer the file
	case err != nil:
		err = fmt.Errorf("%w: %v", exitclient.ErrStreamAborted, err)
	}
	if err == nil && sealer != nil {
		err = sealer.Close()
	}
	return err
}

// lock takes outfiles.Lock on the output directory dir (out as the operator gave it): another
// run holding it is a *exitclient.ConfigError.
func lock(dir, out string) (unlock func(), err error) {
	unlock, err = outfiles.Lock(dir)
	var pe *fs.PathError
	switch {
	case errors.Is(err, outfiles.ErrInUse):
		return nil, &exitclient.ConfigError{Msg: fmt.Sprintf("--out %q is in use by another exit decrypt: wait for it to end, or choose another output directory", out)}
	case errors.As(err, &pe):
		return nil, fmt.Errorf("decrypt: %q: %w", out, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("decrypt: lock %q: %w", out, err)
	}
	return unlock, nil
}
