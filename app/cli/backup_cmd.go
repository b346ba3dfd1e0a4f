package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idvault/idvault/store"
)

func backupCommand() *command {
	return &command{
		name:    "backup",
		summary: "write a consistent hot copy of the data file, verified, mode 0600",
		help: `Works whether or not a server runs on the data file (through its admin API when one does).
--out may name a file, or an existing directory: the copy is then written inside it as
<data file name>-<UTC date and time>.db. An existing file is replaced only with --force, and
only once the new copy passed bbolt's consistency check.`,
		setup: func(c *cmdline) runFunc {
			var cf configFlags
			cf.register(c)
			out := c.String("out", "", "`FILE|DIR` to write the copy to (in a directory, a dated file)")
			c.require("out")
			c.nonEmpty("out")
			force := c.Bool("force", false, "replace an existing file")
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("unexpected argument %q", args[0])
				}
				p := c.p
				l, code, ok := p.load(cf, nil)
				if !ok {
					return code
				}
				target, err := backupTarget(*out, l.Config.Store.Path, ownFiles(cf, l.Config), *force, time.Now())
				if err != nil {
					fmt.Fprintf(p.stderr, "idvault backup: %v\n", err)
					return exitFail
				}
				n, err := backup(ctx, target, *force, func() (*store.Store, error) { return openStore(l.Config, cliLockTimeout) }, func(w io.Writer) error {
					rb, err := adminClient(l.Config)
					if err != nil {
						return err
					}
					return rb.download(ctx, "/admin/backup", w)
				})
				if err != nil && ctx.Err() != nil {
					fmt.Fprintf(p.stderr, "idvault backup: interrupted: nothing was written to %s\n", target)
					return exitFail
				}
				if err != nil {
					fmt.Fprintf(p.stderr, "idvault backup: %v\n", err)
					return exitFail
				}
				fmt.Fprintf(p.stdout, "backup written to %s (%d bytes); keep the master key (store.key_file) apart from it\n", target, n)
				return exitOK
			}
		},
	}
}

// backupTarget resolves --out: a directory gets a dated file inside; an existing file is
// refused without force; the parent directory must exist. The files idvault runs on (own,
// ownFiles) are refused even with force, under any name that reaches them.
func backupTarget(out, dataPath string, own []string, force bool, now time.Time) (string, error) {
	target := out
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		base := filepath.Base(dataPath)
		ext := filepath.Ext(base)
		target = filepath.Join(out, strings.TrimSuffix(base, ext)+"-"+now.UTC().Format("2006-01-02T150405Z")+ext)
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return "", fmt.Errorf("%s is a directory", target)
	case err == nil && isOwnFile(st, own), errors.Is(err, fs.ErrNotExist) && isOwnPath(target, own):
		return "", fmt.Errorf("%s is a file idvault runs on (the data file, its master key, admin token, address file or configuration): write the copy elsewhere", target)
	case err == nil && !force:
		return "", fmt.Errorf("%s exists: use --force to replace it", target)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w", target, unwrapPath(err))
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("cannot write %s: directory %s does not exist", target, dir)
	}
	return target, nil
}

// backup copies the data file directly when no server holds it, else through the admin API,
// into a temporary file beside out; the copy is verified (it opens and passes bbolt's
// consistency check) before it takes the name out. Without force a file that appeared at out
// while the copy was made (another backup to the same dated name) is kept, and backup fails
// as backupTarget would have. Once ctx is done (Ctrl-C) the copy stops at its next write and
// nothing is written; a copy already verified is given its name. Errors name out, never the
// temporary file.
func backup(ctx context.Context, out string, force bool, open func() (*store.Store, error), remote func(io.Writer) error) (int64, error) {
	st, err := open()
	if err != nil && !errors.Is(err, store.ErrLocked) {
		return 0, err
	}
	if st != nil {
		defer st.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".idvault-backup-*")
	if err != nil {
		return 0, fmt.Errorf("cannot write in the directory of %s: %w", out, unwrapPath(err))
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	fail := func(err error) (int64, error) {
		if cerr := ctx.Err(); cerr != nil {
			return 0, fmt.Errorf("%s: %w", out, cerr)
		}
		msg := strings.ReplaceAll(unwrapPath(err).Error(), tmpName, out)
		return 0, fmt.Errorf("%s: %s", out, msg)
	}
	w := ctxWriter{ctx: ctx, w: tmp}
	if st != nil {
		_, err = st.Backup(w)
	} else {
		err = remote(w)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := store.VerifyFile(tmpName); err != nil {
		return fail(fmt.Errorf("the copy is not a valid data file, nothing was written: %w", err))
	}
	info, err := os.Stat(tmpName)
	if err != nil {
		return fail(err)
	}
	if err := os.Chmod(tmpName, 0o600); err != nil {
		return fail(err)
	}
	if err := publish(tmpName, out, force); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("%s exists: use --force to replace it", out)
		}
		return fail(err)
	}
	syncDir(filepath.Dir(out))
	return info.Size(), nil
}

// publish gives the finished copy tmp the name out. With force it replaces whatever is there
// (a rename, atomic). Without, it takes the name only if free, in one step: a hard link, which
// fails with fs.ErrExist when out exists, so that a copy landing between backupTarget's check
// and now is never replaced. A file system without hard links (FAT, some network mounts) gets a
// check then a rename, which leaves that window open there. tmp itself is removed by the
// caller.
func publish(tmp, out string, force bool) error {
	if force {
		return os.Rename(tmp, out)
	}
	err := os.Link(tmp, out)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(out); serr == nil {
		return fs.ErrExist
	}
	return os.Rename(tmp, out)
}

// syncDir fsyncs a directory, so that a name just given in it survives a power loss; the
// copy's data is already synced. It is best effort: some systems cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// ctxWriter fails every write once ctx is done, so that a copy in progress stops there.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// unwrapPath drops the path of an *fs.PathError or *os.LinkError, which may be a temporary
// name the user never gave. Only err itself: a path error wrapped in a message (the admin token
// file a command could not read) keeps that message, which names its own file.
func unwrapPath(err error) error {
	switch e := err.(type) {
	case *fs.PathError:
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	case *os.LinkError:
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	}
	return err
}
