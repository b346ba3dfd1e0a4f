package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/idvault/idvault/app/exitclient"
)

// exitImportCommand is `idvault exit import`: private identities from FILE (bare identity
// lines, JSON lines or a JSON array; gen-dump's identities.jsonl as is) imported in batches.
// Exit codes: 0 all imported, 1 a bad file, a refused identity or a server that stopped
// answering, 2 a usage or configuration error, 130 interrupted.
func exitImportCommand() *command {
	return &command{
		name:    "import",
		args:    "FILE",
		summary: "import private identities into an exit server, in batches",
		setup: func(c *cmdline) runFunc {
			server := addExitServerFlags(c.FlagSet)
			batch := c.Int("batch", 500, "identities per request (at most the server's exit.batch_limit)")
			parallel := c.Int("parallel", 2, "batches in flight at once")
			c.nonEmpty(exitNonEmpty()...)
			return func(ctx context.Context, args []string) int {
				p := c.p
				if len(args) != 1 {
					return c.usageError("want one FILE, got %d arguments", len(args))
				}
				if *batch < 1 || *parallel < 1 {
					fmt.Fprintln(p.stderr, "idvault exit import: --batch and --parallel must be at least 1")
					return exitUsage
				}
				f, err := os.Open(args[0])
				if err != nil {
					fmt.Fprintf(p.stderr, "idvault exit import: %s\n", printable(err.Error()))
					return exitFail
				}
				defer f.Close()
				total, read, err := identitiesOf(f)
				if code, ok := p.checkIdentities(args[0], total, err); !ok {
					return code
				}
				opts := exitclient.ImportOptions{Batch: *batch, Parallel: *parallel}
				return p.importIdentities(ctx, server.client(p), args[0], total, read, opts)
			}
		},
	}
}

// identitiesOf reads the identities of f once to count and check them, and returns how to read
// them as they are sent. A regular file is read twice: checked whole first (a bad line stops
// the import before anything is sent), then read again batch by batch as it is sent, so that
// memory holds a few batches whatever the file's size. Anything else (a pipe) is read once and
// kept.
func identitiesOf(f *os.File) (total int, read func(yield func(exitclient.Identity) bool) error, err error) {
	if fi, serr := f.Stat(); serr != nil || !fi.Mode().IsRegular() {
		ids, err := exitclient.ReadIdentities(f)
		return len(ids), func(yield func(exitclient.Identity) bool) error {
			for _, id := range ids {
				if !yield(id) {
					break
				}
			}
			return nil
		}, err
	}
	total, err = exitclient.ScanIdentities(f, func(exitclient.Identity) bool { return true })
	read = func(yield func(exitclient.Identity) bool) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read identities again: %w", err)
		}
		seen, stopped := 0, false
		_, err := exitclient.ScanIdentities(f, func(id exitclient.Identity) bool {
			if seen++; seen > total { // past the count checked: the file changed
				return false
			}
			stopped = !yield(id) // the import stopped (Ctrl-C, the server gone)
			return !stopped
		})
		if stopped {
			return nil
		}
		if err != nil || seen != total {
			return fmt.Errorf("%q changed while it was imported (rerun once it is complete): %w", f.Name(), errChangedOr(err))
		}
		return nil
	}
	return total, read, err
}

// checkIdentities reports a file of identities that does not read (err: one line per bad
// line) or holds none; ok is false then, with the exit code.
func (p *prog) checkIdentities(file string, total int, err error) (code int, ok bool) {
	if err != nil {
		// One line per bad line of the file (ReadIdentities joins them).
		lines := strings.Split(err.Error(), "\n")
		fmt.Fprintf(p.stderr, "idvault exit import: %q: %s\n", file, printable(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintf(p.stderr, "  %s\n", printable(l))
		}
		return exitFail, false
	}
	if total == 0 {
		fmt.Fprintf(p.stderr, "idvault exit import: %q holds no identity: nothing imported\n", file)
		return exitFail, false
	}
	return 0, true
}

// importIdentities sends the total identities read hands out, with progress on a terminal,
// and reports the outcome.
func (p *prog) importIdentities(ctx context.Context, c *exitclient.Client, file string, total int, read func(yield func(exitclient.Identity) bool) error, opts exitclient.ImportOptions) int {
	start := time.Now()
	pr := newProgress(p.stderr, "importing identities", int64(total))
	opts.Progress = func(done, total int) {
		pr.Update("importing identities", int64(done), int64(total))
	}
	sum, err := c.ImportSeq(ctx, total, read, opts)
	if err != nil {
		pr.Fail()
		return clientStopped(ctx, p, "exit import", err, fmt.Sprintf("%d of %d identities handled: %d imported, %d already imported, %d refused; rerun to continue (importing is idempotent)",
			sum.Imported+sum.AlreadyImported+len(sum.Refused), sum.Total, sum.Imported, sum.AlreadyImported, len(sum.Refused)),
			func() { printRefused(p, file, sum) })
	}
	pr.Done(fmt.Sprintf("%d identities: %d imported, %d already imported, %d refused (%.0f/s)",
		sum.Total, sum.Imported, sum.AlreadyImported, len(sum.Refused), float64(sum.Total)/time.Since(start).Seconds()))
	printRefused(p, file, sum)
	if len(sum.Refused) > 0 {
		return exitFail
	}
	return exitOK
}

func printRefused(p *prog, file string, sum exitclient.ImportSummary) {
	for _, r := range sum.Refused {
		fmt.Fprintf(p.stderr, "  %q:%d: refused: %s\n", file, r.Line, printable(r.Reason))
	}
}

// errChangedOr is err, or an error saying the count of identities is no longer the one checked.
func errChangedOr(err error) error {
	if err != nil {
		return err
	}
	return errors.New("it no longer holds the identities counted when it was checked")
}
