package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"idvault/app/config"
	"idvault/store"
)

// configFlags are the flags every command that reads the configuration has.
type configFlags struct {
	file string
	data string
}

func (f *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "config", "", "configuration file (YAML), layered over the embedded defaults")
	fs.StringVar(&f.data, "data", "", "data file path (overrides store.path)")
}

// load reads the configuration; problems are printed and make it fail.
func (p *prog) load(f configFlags, flags map[string]any) (*config.Loaded, int, bool) {
	if flags == nil {
		flags = map[string]any{}
	}
	if f.data != "" {
		flags["store.path"] = f.data
	}
	l, err := config.Load(config.Sources{Embedded: p.env.Embedded, File: f.file, Environ: p.env.Environ, Flags: flags})
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault: %v\n", err)
		return nil, exitConfig, false
	}
	if err := l.Err(); err != nil {
		fmt.Fprintln(p.stderr, "idvault: the configuration has problems:")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(p.stderr, "  - %s\n", line)
		}
		return nil, exitConfig, false
	}
	return l, 0, true
}

// openStore opens the data file with the master key; store.ErrLocked means a server holds it.
func openStore(c config.Config, lockTimeout time.Duration) (*store.Store, error) {
	mk, _, err := store.LoadOrCreateMasterKey(c.Store.KeyFile)
	if err != nil {
		return nil, err
	}
	opts := store.Options{Path: c.Store.Path, MasterKey: mk, LockTimeout: c.Store.LockTimeout}
	if lockTimeout > 0 {
		opts.LockTimeout = lockTimeout
	}
	return store.Open(opts)
}

// adminTokenFile is where a generated admin token lives: admin.token beside the data file.
func adminTokenFile(c config.Config) string {
	if c.Admin.TokenFile != "" {
		return c.Admin.TokenFile
	}
	return filepath.Join(filepath.Dir(c.Store.Path), "admin.token")
}

// readAdminToken returns the configured admin token, or the generated one from its file.
func readAdminToken(c config.Config) (string, error) {
	if c.Admin.Token != "" {
		return c.Admin.Token, nil
	}
	path := adminTokenFile(c)
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	// The same rule as the master key: the token opens the whole admin API.
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("admin token file %s is readable by group or others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	return strings.TrimSpace(string(raw)), nil
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
