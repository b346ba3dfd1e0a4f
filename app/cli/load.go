package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/smallfile"
	"github.com/idvault/idvault/store"
)

// configFlags are the flags every command that reads the configuration has.
type configFlags struct {
	file string
	data string
}

func (f *configFlags) register(c *cmdline) {
	c.StringVar(&f.file, "config", "", "configuration `FILE` (YAML): replaces the embedded local-dev profile, over the built-in defaults")
	c.StringVar(&f.data, "data", "", "data `FILE` in a directory that exists (overrides store.path; the master key and admin token default to that directory)")
	c.nonEmpty("config", "data")
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

// openStore opens an existing data file with its master key; store.ErrLocked means a server
// holds it. Only serve creates a data file or a master key: every other command refuses a
// missing one, naming the path and how to set it, rather than start an empty store.
func openStore(c config.Config, lockTimeout time.Duration) (*store.Store, error) {
	if err := mustExist(c.Store.Path, "data file", "--data FILE, store.path in the --config file, or IDVAULT_STORE__PATH",
		`start "idvault serve" once to create it, or point to an existing one with`); err != nil {
		return nil, err
	}
	if _, err := os.Stat(c.Store.KeyFile); err != nil {
		// A data path that is no data file (a directory, a config file given to --data) is
		// named as such: a key file would not help.
		if err := store.CheckDataFile(c.Store.Path); err != nil {
			return nil, err
		}
	}
	data, err := filepath.Abs(c.Store.Path)
	if err != nil {
		data = c.Store.Path
	}
	if err := mustExist(c.Store.KeyFile, "master key", "store.key_file in the --config file or IDVAULT_STORE__KEY_FILE (default: master.key beside the data file)",
		"the secrets of the data file "+data+" cannot be read without the key it was created with; set its path with"); err != nil {
		return nil, err
	}
	mk, _, err := store.LoadOrCreateMasterKey(c.Store.KeyFile, c.Store.Path)
	if err != nil {
		return nil, err
	}
	opts := store.Options{Path: c.Store.Path, MasterKey: mk, LockTimeout: c.Store.LockTimeout}
	if lockTimeout > 0 {
		opts.LockTimeout = lockTimeout
	}
	return openDataFile(opts, c.Store.KeyFile)
}

// openDataFile opens the data file; a key that does not open it is named in the error beside the
// data file, as the two files the operator must match.
func openDataFile(opts store.Options, keyFile string) (*store.Store, error) {
	st, err := store.Open(opts)
	if errors.Is(err, store.ErrWrongMasterKey) {
		return nil, fmt.Errorf("%w; the key file given: %s", err, keyFile)
	}
	return st, err
}

// mustExist fails with a message naming the absolute path, what it is and how to set it.
func mustExist(path, what, setBy, advice string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	abs, aerr := filepath.Abs(path)
	if aerr != nil {
		abs = path
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no %s at %s: %s %s", what, abs, advice, setBy)
	}
	return fmt.Errorf("%s %s: %w", what, abs, err)
}

// adminTokenFile is where a generated admin token lives (admin.token_file; config resolves
// its default, admin.token beside the data file).
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
	raw, err := smallfile.Read(path, 4<<10) // one token line
	if err != nil {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	// The same rule as the master key: the token opens the whole admin API.
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("admin token file %s is readable by group or others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	// Held to admin.token's rule: an empty, short or two-line file would otherwise give a token
	// no client can send, or a weak one.
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return "", fmt.Errorf("admin token file %s is empty: write the token in it, or remove it and serve makes a new one", path)
	}
	if err := config.CheckBearerToken(tok); err != nil {
		return "", fmt.Errorf("admin token file %s: the token %v", path, err)
	}
	return tok, nil
}

// newLogger builds the logger of the configuration; close writes out the request lines it
// buffers (see package logging).
func newLogger(c config.Log, w io.Writer) (log *slog.Logger, close func() error) {
	log, bw := logging.New(logging.Options{Level: c.Level, Format: c.Format}, w)
	return log, bw.Close
}
