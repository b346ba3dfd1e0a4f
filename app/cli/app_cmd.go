package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
)

func appCommand() *command {
	return &command{
		name:    "app",
		summary: "manage apps: create, list, show, rotate-token, delete",
		help: `The app commands work whether or not a server runs on the same data file: when a server
holds it, they go through its admin API (at the address it recorded beside the data file).
They never create a data file: start "idvault serve" once first.`,
		subs: []*command{
			{name: "create", summary: "create an app and print its app ID, app secret and auth token, once", setup: appCreate},
			{name: "list", summary: "list apps (never secrets or tokens)", setup: appList},
			{name: "show", args: "ID", summary: "show one app (never its secret or token)", setup: appShow},
			{name: "rotate-token", args: "ID", summary: "issue a new auth token (shown once); the old one stops working", setup: appRotate},
			{name: "delete", args: "ID", summary: "delete an app and all its identity records and codes (asks first on a terminal)", setup: appDelete},
		},
	}
}

// withBackend loads the config, opens the backend, and runs fn.
func (p *prog) withBackend(cf configFlags, fn func(appBackend) error) int {
	l, code, ok := p.load(cf, nil)
	if !ok {
		return code
	}
	b, err := openBackend(l.Config)
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault: %v\n", err)
		return exitFail
	}
	defer b.close()
	if err := fn(b); err != nil {
		fmt.Fprintf(p.stderr, "idvault: %v\n", err)
		return exitFail
	}
	return exitOK
}

// checkOutFile refuses the output file of flag (--out, --identity-server-env) when it cannot be
// written: an existing file without force, one of the files idvault runs on (own, ownFiles)
// even with force, a directory, or a missing parent directory.
func checkOutFile(flag, path string, force bool, own []string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s %s is a directory: give a file name", flag, path)
	case err == nil && isOwnFile(st, own), errors.Is(err, os.ErrNotExist) && isOwnPath(path, own):
		return fmt.Errorf("%s %s is a file idvault runs on (the data file, its master key, admin token, address file or configuration): give another file", flag, path)
	case err == nil && !force:
		return fmt.Errorf("%s %s exists: use --force to replace it", flag, path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
	}
	return nil
}

// writePrivateFile writes data to path with mode 0600: a new file, or with force an atomic
// replacement (writeReplace).
func writePrivateFile(path string, data []byte, force bool) error {
	if !force {
		return writeNew(path, data, 0o600)
	}
	return writeReplace(path, data, 0o600)
}

func appList(c *cmdline) runFunc {
	var cf configFlags
	cf.register(c)
	asJSON := c.Bool("json", false, "print JSON")
	return func(_ context.Context, args []string) int {
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		return c.p.withBackend(cf, func(b appBackend) error {
			list, err := b.list()
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(c.p.stdout, map[string]any{"apps": list})
			}
			tw := tabwriter.NewWriter(c.p.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tTEST\tDECLARED")
			for _, a := range list {
				fmt.Fprintf(tw, "%s\t%s\t%t\t%t\n", a.ID, printable(a.Name), a.Test, a.Declared)
			}
			return tw.Flush()
		})
	}
}

// oneApp declares the flags of show, rotate-token and delete (plus extra's) and parses their
// one app ID.
func oneApp(c *cmdline, extra func(), fn func(b appBackend, id []byte, asJSON bool) error) runFunc {
	var cf configFlags
	cf.register(c)
	asJSON := c.Bool("json", false, "print JSON")
	if extra != nil {
		extra()
	}
	c.positional = func(arg string) bool { _, err := apps.ParseID(arg); return err == nil }
	return func(_ context.Context, args []string) int {
		if len(args) != 1 {
			return c.usageError("want exactly one app ID")
		}
		id, err := apps.ParseID(args[0])
		if err != nil {
			// Not quoted: an app secret or a token pasted in its place would be printed.
			return c.usageError("the argument is not an app ID (the base64 of 32 bytes that app list prints; it is not shown, as it may be a secret)")
		}
		return c.p.withBackend(cf, func(b appBackend) error { return fn(b, id, *asJSON) })
	}
}

func appShow(c *cmdline) runFunc {
	return oneApp(c, nil, func(b appBackend, id []byte, asJSON bool) error {
		v, err := b.show(id)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.p.stdout, map[string]any{"app": v})
		}
		printApp(c.p.stdout, v)
		return nil
	})
}

func appRotate(c *cmdline) runFunc {
	return oneApp(c, nil, func(b appBackend, id []byte, asJSON bool) error {
		v, tok, err := b.rotate(id)
		if err != nil {
			return declaredHint(err)
		}
		if asJSON {
			return writeJSON(c.p.stdout, map[string]any{"app": v, "auth_token": tok})
		}
		fmt.Fprintf(c.p.stdout, "new auth token for %s (%s):\n  %s\nThe old token no longer works. This token is shown only now.\n", printable(v.Name), v.ID, tok)
		return nil
	})
}

// errNotConfirmed: the user answered no to a confirmation.
var errNotConfirmed = errors.New("not confirmed: nothing was deleted")

func appDelete(c *cmdline) runFunc {
	var yes *bool
	return oneApp(c, func() {
		yes = c.Bool("yes", false, "do not ask for confirmation (it is asked only when stdin is a terminal)")
	}, func(b appBackend, id []byte, asJSON bool) error {
		if !*yes && c.p.interactive() {
			v, err := b.show(id)
			if err != nil {
				return err
			}
			ok, err := c.p.confirm(fmt.Sprintf("Delete app %q (%s) and all its identity records and codes? This cannot be undone. [y/N] ", v.Name, v.ID))
			if err != nil {
				return err
			}
			if !ok {
				return errNotConfirmed
			}
		}
		if err := b.remove(id); err != nil {
			return declaredHint(err)
		}
		if asJSON {
			return writeJSON(c.p.stdout, map[string]any{"deleted": apps.FormatID(id)})
		}
		fmt.Fprintf(c.p.stdout, "deleted app %s and all its records\n", apps.FormatID(id))
		return nil
	})
}

// interactive reports whether stdin is a terminal (confirmations are asked only then, so
// scripts and pipes are never blocked by a prompt).
func (p *prog) interactive() bool {
	f, ok := p.env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirm asks question on stderr and reads a yes or no from stdin.
func (p *prog) confirm(question string) (bool, error) {
	fmt.Fprint(p.stderr, question)
	line, err := bufio.NewReader(p.env.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(p.stderr)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

func declaredHint(err error) error {
	if errors.Is(err, apps.ErrDeclared) {
		return errors.New("this app is declared in the config file: change it there")
	}
	return err
}

func printApp(w io.Writer, v admin.AppView) {
	fmt.Fprintf(w, "app ID:                %s\nURL ID:                %s\nname:                  %s\ntest mode:             %t\ndeclared in config:    %t\nlegacy errors:         %t\nregistered users only: %t\n",
		v.ID, v.URLID, printable(v.Name), v.Test, v.Declared, v.LegacyErrors, v.RegisteredUsersOnly)
	if !v.CreatedAt.IsZero() {
		fmt.Fprintf(w, "created:               %s\n", v.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
