package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// The files `idvault init` writes in --dir.
const (
	initConfigName  = "config.yaml"
	initKeyName     = "master.key"
	initTokenName   = "admin.token"
	initUnitName    = "idvault.service"
	initIdentityEnv = "identity-server.env"
)

// initCommand is `idvault init`: the files a production server starts from, written once.
func initCommand() *command {
	return &command{
		name:    "init",
		summary: "write a production config, its master key, its admin token and a hardened systemd unit",
		help:    initHelp,
		setup: func(c *cmdline) runFunc {
			dir := c.String("dir", "", "`DIR` to write config.yaml, master.key, admin.token and idvault.service into (created 0700 if missing)")
			c.require("dir")
			bin := c.String("bin", "", "the idvault binary `PATH` the unit runs (default: this binary)")
			data := c.String("data", "/var/lib/idvault", "`DIR` of the data file, the only place the service writes")
			listen := c.String("listen", "127.0.0.1:8080", "listen address `ADDR` (server.listen); loopback behind a TLS reverse proxy")
			force := c.Bool("force-permissions", false, "make an existing --dir writable by its owner only, and root's when run as root, instead of refusing it")
			c.nonEmpty("dir", "bin", "data", "listen")
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("unexpected argument %q", args[0])
				}
				// Checked as serve checks server.listen, so the config written is one serve starts on.
				if err := config.CheckListen(*listen); err != nil {
					return c.usageError("--listen: %v", err)
				}
				p, err := initPaths(*dir, *bin, *data)
				if err != nil {
					fmt.Fprintf(c.p.stderr, "idvault init: %v\n", err)
					return exitFail
				}
				p.listen = *listen
				fixed, err := checkInitDir(p.dir, *force)
				if err != nil {
					fmt.Fprintf(c.p.stderr, "idvault init: %v\n", err)
					return exitFail
				}
				for _, line := range fixed {
					fmt.Fprintf(c.p.stdout, "%s (--force-permissions)\n", line)
				}
				if err := p.write(); err != nil {
					fmt.Fprintf(c.p.stderr, "idvault init: %v\n", err)
					return exitFail
				}
				fmt.Fprintf(c.p.stdout, `wrote %s (the production config)
wrote %s and %s (mode 0600: back the master key up apart from the data)
wrote %s (a sandboxed systemd unit running %s)

Start it:
  idvault serve --config %s
or as a service:
  install -m 0644 %s /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now idvault
`, p.config, p.key, p.token, p.unit, p.bin, p.config, p.unit)
				return exitOK
			}
		},
	}
}

// initHelp is the help of init, under its usage line.
const initHelp = `Writes, in --dir: config.yaml (a production profile: fake authentication off, the
identity server and the verification API off until configured, JSON logs, the data file in
--data), master.key and admin.token (mode 0600), and idvault.service, a systemd unit that runs
"BIN serve --config DIR/config.yaml" sandboxed: it can write only --data, and reads the key
and the token as systemd credentials. "idvault serve --config DIR/config.yaml" is ready at
once. Existing files are never replaced. An existing --dir writable by group or others, or
owned by another user, is refused (another account could swap the unit, the config or the key
before they are installed), as is a directory above it that another account could rename it
through; --force-permissions fixes --dir itself.`

// initFiles are the absolute paths `idvault init` works with.
type initFiles struct {
	dir, data, bin, listen             string
	config, key, token, unit, identity string
}

func initPaths(dir, bin, data string) (*initFiles, error) {
	var err error
	p := &initFiles{}
	if p.dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if p.data, err = filepath.Abs(data); err != nil {
		return nil, err
	}
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find this binary (give --bin): %w", err)
		}
		if resolved, err := filepath.EvalSymlinks(bin); err == nil {
			bin = resolved
		}
	}
	if p.bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	if st, err := os.Stat(p.bin); err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("--bin %s: not an executable file", p.bin)
	}
	if within(p.data, p.dir) || within(p.dir, p.data) {
		return nil, fmt.Errorf("--dir %s and --data %s overlap: the master key and the config would sit where the service writes, and in every copy of the data directory; give them separate directories", p.dir, p.data)
	}
	for _, s := range []string{p.dir, p.data, p.bin} {
		if strings.ContainsAny(s, "\"\\\n'$") {
			return nil, fmt.Errorf("%q: quotes, backslashes, dollar signs and newlines cannot go in the systemd unit", s)
		}
	}
	p.config = filepath.Join(p.dir, initConfigName)
	p.key = filepath.Join(p.dir, initKeyName)
	p.token = filepath.Join(p.dir, initTokenName)
	p.unit = filepath.Join(p.dir, initUnitName)
	p.identity = filepath.Join(p.dir, initIdentityEnv)
	return p, nil
}

// within reports whether the absolute, clean path a is b or below it.
func within(a, b string) bool {
	rel, err := filepath.Rel(b, a)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// write refuses when any file it would write exists (or a data file already sits in --data:
// a new master key could not open it), then writes every file; on a failure it removes what
// it wrote, so a second run starts clean.
func (p *initFiles) write() (err error) {
	dataFile := filepath.Join(p.data, "idvault.db")
	for _, f := range []string{p.config, p.key, p.token, p.unit, dataFile} {
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("%s exists: init never replaces a file (move it away, or use another --dir or --data)", f)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("create --dir: %w", err)
	}
	// Again once it exists: another account may have made it first, in a sticky /tmp.
	if _, err := checkInitDir(p.dir, false); err != nil {
		return err
	}
	var written []string
	defer func() {
		if err != nil {
			for _, f := range written {
				os.Remove(f)
			}
		}
	}()
	if _, _, err := store.LoadOrCreateMasterKey(p.key, dataFile); err != nil {
		return err
	}
	written = append(written, p.key)
	tok, err := newToken()
	if err != nil {
		return fmt.Errorf("generate admin token: %w", err)
	}
	files := []struct {
		path string
		data string
		mode os.FileMode
	}{
		{p.token, tok + "\n", 0o600},
		{p.config, p.configYAML(), 0o644},
		{p.unit, p.systemdUnit(), 0o644},
	}
	for _, f := range files {
		if err := writeNew(f.path, []byte(f.data), f.mode); err != nil {
			return err
		}
		written = append(written, f.path)
	}
	if p.unitUser() != "" {
		// Outside /var/lib the service runs as this user and needs --data to exist.
		if err := os.MkdirAll(p.data, 0o700); err != nil {
			return fmt.Errorf("create --data: %w", err)
		}
	}
	return nil
}

// writeNew writes a new file (never replacing one) and syncs it (store.WriteNewFile); its error
// names the path once.
func writeNew(path string, data []byte, mode os.FileMode) error {
	if err := store.WriteNewFile(path, data, mode); err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeIdentityServerEnv writes the environment file that turns the identity server on for
// the app just created, with a new random bearer token (the identity server then refuses any
// request without it, wherever it listens).
func writeIdentityServerEnv(path string, cr admin.CreateResponse) error {
	tok, err := newToken()
	if err != nil {
		return fmt.Errorf("generate the identity server token: %w", err)
	}
	text := fmt.Sprintf(`# Written by "idvault app create --identity-server-env" for app %q: the identity server
# serves it, and every request needs "Authorization: Bearer <IDVAULT_IDENTITY_SERVER__TOKEN>".
IDVAULT_IDENTITY_SERVER__ENABLED=true
IDVAULT_IDENTITY_SERVER__APP_ID=%s
IDVAULT_IDENTITY_SERVER__TOKEN=%s
`, cr.App.Name, cr.App.ID, tok)
	return writePrivateFile(path, []byte(text), false)
}
