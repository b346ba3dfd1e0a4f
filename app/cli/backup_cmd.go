package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"idvault/store"
)

func runBackup(_ context.Context, p *prog, args []string) int {
	fs := p.newFlags("backup", "backup --out FILE [--config FILE]")
	var cf configFlags
	cf.register(fs)
	out := fs.String("out", "", "where to write the copy (required); written atomically, mode 0600")
	if _, code, ok := p.parse(fs, args); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(p.stderr, "idvault backup: --out is required")
		return exitUsage
	}
	l, code, ok := p.load(cf, nil)
	if !ok {
		return code
	}
	n, err := backup(*out, func() (*store.Store, error) { return openStore(l.Config, cliLockTimeout) }, func(f *os.File) error {
		rb, err := adminClient(l.Config)
		if err != nil {
			return err
		}
		return rb.download("/admin/backup", f)
	})
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault backup: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(p.stdout, "backup written to %s (%d bytes); keep the master key (store.key_file) apart from it\n", *out, n)
	return exitOK
}

// backup copies the data file directly when no server holds it, else through the admin API;
// either way the copy is verified (it opens and passes bbolt's consistency check) before it
// replaces out.
func backup(out string, open func() (*store.Store, error), remote func(*os.File) error) (int64, error) {
	st, err := open()
	if err == nil {
		defer st.Close()
		return st.BackupToFile(out)
	}
	if !errors.Is(err, store.ErrLocked) {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".idvault-backup-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if err := remote(tmp); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, err
	}
	st2, _ := tmp.Stat()
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := store.VerifyFile(tmp.Name()); err != nil {
		return 0, fmt.Errorf("the copy received from the server is not a valid data file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return 0, err
	}
	return st2.Size(), nil
}
