package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/idvault/idvault/app/admin"
)

// appCreateFlags are the flags of app create: the config, the app to create, and where and
// how to print its secret and token.
type appCreateFlags struct {
	cf                   configFlags
	req                  admin.CreateRequest
	asJSON, asEnv, force *bool
	out, idEnv           *string
}

// register declares the flags of app create on c.
func (f *appCreateFlags) register(c *cmdline) {
	f.cf.register(c)
	c.StringVar(&f.req.Name, "name", "", "app `NAME`")
	c.require("name")
	c.BoolVar(&f.req.Test, "test", false, "test mode: enables fake authentication and /verification/email/code")
	c.BoolVar(&f.req.LegacyErrors, "legacy-errors", false, "flat error bodies on the verification send route")
	c.BoolVar(&f.req.RegisteredUsersOnly, "registered-users-only", false, "send verification mail only to registered users")
	f.asJSON = c.Bool("json", false, "print JSON")
	f.asEnv = c.Bool("env", false, "print shell variable assignments (APP_ID, URL_ID, APP_SECRET, AUTH_TOKEN) to source with '.'")
	f.out = c.String("out", "", "write the output to `FILE` (created with mode 0600: it holds the app secret) instead of stdout")
	f.force = c.Bool("force", false, "with --out, replace an existing file")
	c.nonEmpty("name", "out", "identity-server-env")
	f.idEnv = c.String("identity-server-env", "", "also write `FILE` (0600), an environment file that turns the identity server on for this app with a new bearer token (idvault.service from \"idvault init\" reads it; restart the service)")
}

// appCreate is `idvault app create`: it declares the flags and returns the run function.
func appCreate(c *cmdline) runFunc {
	f := &appCreateFlags{}
	f.register(c)
	return func(_ context.Context, args []string) int {
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		if *f.asJSON && *f.asEnv {
			return c.usageError("--json and --env exclude each other")
		}
		if code, ok := f.checkOutFiles(c.p); !ok {
			return code
		}
		return c.p.withBackend(f.cf, func(b appBackend) error { return f.create(c.p, b) })
	}
}

// checkOutFiles checks --out and --identity-server-env before the app exists, so a refusal
// loses no secret; it reports the refusal and returns the exit code when it refuses.
func (f *appCreateFlags) checkOutFiles(p *prog) (int, bool) {
	if *f.out != "" {
		l, code, ok := p.load(f.cf, nil)
		if !ok {
			return code, false
		}
		if err := checkOutFile("--out", *f.out, *f.force, ownFiles(f.cf, l.Config)); err != nil {
			fmt.Fprintf(p.stderr, "idvault app create: %v\n", err)
			return exitFail, false
		}
	}
	if *f.idEnv != "" {
		if err := checkOutFile("--identity-server-env", *f.idEnv, false, nil); err != nil {
			fmt.Fprintf(p.stderr, "idvault app create: %v\n", err)
			return exitFail, false
		}
	}
	return exitOK, true
}

// create creates the app on b, writes the identity server's environment file when asked, then
// prints the app's secret and token as the flags say (deliver).
func (f *appCreateFlags) create(p *prog, b appBackend) error {
	cr, err := b.create(f.req)
	if err != nil {
		return err
	}
	if *f.idEnv != "" {
		if err := writeIdentityServerEnv(*f.idEnv, cr); err != nil {
			return fmt.Errorf("app %s created (ID %s), but %w", printable(cr.App.Name), cr.App.ID, err)
		}
		fmt.Fprintf(p.stderr, "the identity server is on for app %s once the server restarts with %s (its bearer token is in that file)\n", printable(cr.App.Name), *f.idEnv)
	}
	var buf bytes.Buffer
	switch {
	case *f.asJSON:
		err = writeJSON(&buf, cr)
	case *f.asEnv:
		writeEnv(&buf, cr)
	default:
		writeCreated(&buf, cr, *f.out != "")
	}
	if err != nil {
		return err
	}
	return f.deliver(p, cr, buf.Bytes())
}

// deliver writes out, the created app's output, to stdout or to --out. The app exists by now:
// when --out cannot be written, out goes to stdout rather than be lost.
func (f *appCreateFlags) deliver(p *prog, cr admin.CreateResponse, out []byte) error {
	if *f.out == "" {
		_, err := p.stdout.Write(out)
		return err
	}
	if err := writePrivateFile(*f.out, out, *f.force); err != nil {
		// The app exists now: its secret must not be lost with the file.
		p.stdout.Write(out)
		return fmt.Errorf("app created, but %v: its secret and token are printed above, once", err)
	}
	fmt.Fprintf(p.stdout, "app %s created (ID %s); its app secret and auth token are in %s (mode 0600)\n", printable(cr.App.Name), cr.App.ID, *f.out)
	return nil
}

func writeCreated(w io.Writer, cr admin.CreateResponse, toFile bool) {
	fmt.Fprintf(w, "app created: %s\n\n  app ID:     %s\n  URL ID:     %s\n  app secret: %s\n  auth token: %s\n  test mode:  %t\n\n",
		printable(cr.App.Name), cr.App.ID, cr.App.URLID, cr.AppSecret, cr.AuthToken, cr.App.Test)
	if !toFile {
		fmt.Fprintln(w, "The app secret and the auth token are shown only now: store them safely.")
	}
}

// writeEnv writes the app's values as shell assignments; every value is base64, so single
// quotes are safe.
func writeEnv(w io.Writer, cr admin.CreateResponse) {
	fmt.Fprintf(w, "# idvault app %q: keep this file private, it holds the app secret and the auth token\n", cr.App.Name)
	fmt.Fprintf(w, "APP_ID='%s'\nURL_ID='%s'\nAPP_SECRET='%s'\nAUTH_TOKEN='%s'\n", cr.App.ID, cr.App.URLID, cr.AppSecret, cr.AuthToken)
}
