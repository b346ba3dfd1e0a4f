package exitclient

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
)

// PartSuffix ends the temporary name a clear file is written under until it is complete.
const PartSuffix = ".idvault-part"

// ErrStreamAborted reports a decrypt answer cut before its end: the server found a bad chunk
// after it started sending, or the connection broke. Nothing of it is kept.
var ErrStreamAborted = errors.New("the clear stream was cut before its end")

// DecryptOptions tunes DecryptTree.
type DecryptOptions struct {
	// Jobs is the number of files decrypted at once (default 4).
	Jobs int
	// Progress, when set, is called after each file with the files handled so far (done,
	// skipped or failed), the total, and the encrypted bytes handled so far; one call at a
	// time.
	Progress func(done, total int, bytes int64)
}

// DecryptReport is the outcome of DecryptTree.
type DecryptReport struct {
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
	Code    string // the server's error code, or connection_failed, stream_aborted, client_error
	Message string
}

// DecryptTree mirrors every regular file under in into a clear file at the same relative path
// under out. It is resumable: a file whose clear file exists is skipped; a clear file is
// written under a temporary name (PartSuffix) in its directory, synced, then renamed, so a
// killed run never leaves a partial file under a final name. Failures are reported per file,
// never stop the others, and leave no output. An error is returned only when the tree cannot
// be walked at all or ctx ends.
func (c *Client) DecryptTree(ctx context.Context, in, out string, opts DecryptOptions) (DecryptReport, error) {
	var rep DecryptReport
	inAbs, err := filepath.Abs(in)
	if err != nil {
		return rep, err
	}
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return rep, err
	}
	if outAbs == inAbs || strings.HasPrefix(outAbs, inAbs+string(filepath.Separator)) {
		return rep, fmt.Errorf("decrypt: the output directory %s must not be inside the input directory %s", out, in)
	}
	var files []string
	err = filepath.WalkDir(inAbs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(inAbs, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("decrypt: list %s: %w", in, err)
	}
	sort.Strings(files)
	rep.Total = len(files)
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 4
	}

	var (
		mu      sync.Mutex
		handled int
		bytes   atomic.Int64
		next    = make(chan string)
		wg      sync.WaitGroup
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
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rel := range next {
				dst := filepath.Join(outAbs, rel)
				if _, err := os.Stat(dst); err == nil {
					finish(func() { rep.Skipped++ })
					continue
				}
				n, err := c.decryptFile(ctx, filepath.Join(inAbs, rel), dst)
				bytes.Add(n)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					finish(func() { rep.Failures = append(rep.Failures, Failure{File: rel, Code: Code(err), Message: err.Error()}) })
					continue
				}
				finish(func() { rep.Decrypted++; rep.Bytes += n })
			}
		}()
	}
feed:
	for _, rel := range files {
		select {
		case next <- rel:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	sort.Slice(rep.Failures, func(i, j int) bool { return rep.Failures[i].File < rep.Failures[j].File })
	return rep, ctx.Err()
}

// decryptFile posts src and writes the clear bytes to dst through dst+PartSuffix. It returns
// the encrypted size sent.
func (c *Client) decryptFile(ctx context.Context, src, dst string) (int64, error) {
	st, err := os.Stat(src)
	if err != nil {
		return 0, err
	}
	resp, err := c.do(ctx, func() (*http.Request, error) {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodPost, c.URL+"/v1/decrypt", f)
		if err != nil {
			f.Close()
			return nil, err
		}
		req.ContentLength = st.Size()
		req.Header.Set("Content-Type", "application/octet-stream")
		return req, nil
	})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	part := dst + PartSuffix
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	_, err = io.CopyBuffer(struct{ io.Writer }{f}, resp.Body, make([]byte, 256<<10))
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %v", ErrStreamAborted, err)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(part, dst)
	}
	if err != nil {
		_ = os.Remove(part)
		return 0, err
	}
	return st.Size(), nil
}
