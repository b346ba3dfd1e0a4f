package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"idvault/app/admin"
	"idvault/app/apps"
)

func runApp(ctx context.Context, p *prog, args []string) int {
	subs := map[string]func(*prog, []string) int{
		"create": appCreate, "list": appList, "show": appShow, "rotate-token": appRotate, "delete": appDelete,
	}
	if len(args) == 0 || isHelp(args[0]) {
		w := p.stdout
		if len(args) == 0 {
			w = p.stderr
		}
		fmt.Fprint(w, `Usage: idvault app <create|list|show|rotate-token|delete> [flags]

  create --name NAME [--test] [--legacy-errors] [--registered-users-only] [--json]
         creates an app and prints its app ID, app secret and auth token, once
  list [--json]              lists apps (never secrets or tokens)
  show ID [--json]           shows one app (never its secret or token)
  rotate-token ID [--json]   issues a new auth token (shown once); the old one stops working
  delete ID                  deletes an app and all its identity records and codes

Every subcommand takes --config FILE and --data FILE. They work whether or not a server runs
on the same data file: when a server holds it, they go through its admin API.
`)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	sub, ok := subs[args[0]]
	if !ok {
		fmt.Fprintf(p.stderr, "idvault app: unknown subcommand %q\n", args[0])
		return exitUsage
	}
	return sub(p, args[1:])
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

func appCreate(p *prog, args []string) int {
	fs := p.newFlags("app create", "app create --name NAME [--test] [--json]")
	var cf configFlags
	cf.register(fs)
	var req admin.CreateRequest
	fs.StringVar(&req.Name, "name", "", "app name (required)")
	fs.BoolVar(&req.Test, "test", false, "test mode: enables fake authentication and /verification/email/code")
	fs.BoolVar(&req.LegacyErrors, "legacy-errors", false, "flat error bodies on the verification send route")
	fs.BoolVar(&req.RegisteredUsersOnly, "registered-users-only", false, "send verification mail only to registered users")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, code, ok := p.parse(fs, args); !ok {
		return code
	}
	if req.Name == "" {
		fmt.Fprintln(p.stderr, "idvault app create: --name is required")
		return exitUsage
	}
	return p.withBackend(cf, func(b appBackend) error {
		out, err := b.create(req)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(p.stdout, out)
		}
		fmt.Fprintf(p.stdout, "app created: %s\n\n  app ID:     %s\n  app secret: %s\n  auth token: %s\n  test mode:  %t\n\n",
			out.App.Name, out.App.ID, out.AppSecret, out.AuthToken, out.App.Test)
		fmt.Fprintln(p.stdout, "The app secret and the auth token are shown only now: store them safely.")
		return nil
	})
}

func appList(p *prog, args []string) int {
	fs := p.newFlags("app list", "app list [--json]")
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, code, ok := p.parse(fs, args); !ok {
		return code
	}
	return p.withBackend(cf, func(b appBackend) error {
		list, err := b.list()
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(p.stdout, map[string]any{"apps": list})
		}
		tw := tabwriter.NewWriter(p.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTEST\tDECLARED")
		for _, a := range list {
			fmt.Fprintf(tw, "%s\t%s\t%t\t%t\n", a.ID, a.Name, a.Test, a.Declared)
		}
		return tw.Flush()
	})
}

// oneApp parses "ID" for show, rotate-token and delete.
func (p *prog) oneApp(name string, args []string, fn func(b appBackend, id []byte, asJSON bool) error) int {
	fs := p.newFlags("app "+name, "app "+name+" ID [--json]")
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code, ok := p.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(p.stderr, "idvault app %s: want exactly one app ID\n", name)
		return exitUsage
	}
	id, err := apps.ParseID(pos[0])
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault app %s: %q is not an app ID (base64 of 32 bytes)\n", name, pos[0])
		return exitUsage
	}
	return p.withBackend(cf, func(b appBackend) error { return fn(b, id, *asJSON) })
}

func appShow(p *prog, args []string) int {
	return p.oneApp("show", args, func(b appBackend, id []byte, asJSON bool) error {
		v, err := b.show(id)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(p.stdout, map[string]any{"app": v})
		}
		printApp(p.stdout, v)
		return nil
	})
}

func appRotate(p *prog, args []string) int {
	return p.oneApp("rotate-token", args, func(b appBackend, id []byte, asJSON bool) error {
		v, tok, err := b.rotate(id)
		if err != nil {
			return declaredHint(err)
		}
		if asJSON {
			return writeJSON(p.stdout, map[string]any{"app": v, "auth_token": tok})
		}
		fmt.Fprintf(p.stdout, "new auth token for %s (%s):\n  %s\nThe old token no longer works. This token is shown only now.\n", v.Name, v.ID, tok)
		return nil
	})
}

func appDelete(p *prog, args []string) int {
	return p.oneApp("delete", args, func(b appBackend, id []byte, asJSON bool) error {
		if err := b.remove(id); err != nil {
			return declaredHint(err)
		}
		if asJSON {
			return writeJSON(p.stdout, map[string]any{"deleted": apps.FormatID(id)})
		}
		fmt.Fprintf(p.stdout, "deleted app %s and all its records\n", apps.FormatID(id))
		return nil
	})
}

func declaredHint(err error) error {
	if errors.Is(err, apps.ErrDeclared) {
		return errors.New("this app is declared in the config file: change it there")
	}
	return err
}

func printApp(w io.Writer, v admin.AppView) {
	fmt.Fprintf(w, "app ID:                %s\nname:                  %s\ntest mode:             %t\ndeclared in config:    %t\nlegacy errors:         %t\nregistered users only: %t\n",
		v.ID, v.Name, v.Test, v.Declared, v.LegacyErrors, v.RegisteredUsersOnly)
	if !v.CreatedAt.IsZero() {
		fmt.Fprintf(w, "created:               %s\n", v.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
