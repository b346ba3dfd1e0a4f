package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkInitDir refuses an --dir that another account could change before the files init writes
// are installed: one writable by group or others (another account could put its own
// identity-server.env there, which the unit reads, or swap the unit, the config or the key for
// its own), or owned by another user; and an existing directory above it that another account
// could rename it through (writable by group or others without the sticky bit, or owned by
// another user than this one and root). With force (--force-permissions) --dir itself is fixed:
// group and others lose write permission and, when this process is root, it becomes root's;
// what was fixed is returned, one line each. The directories above are never changed: changing
// the mode of a parent like /home or /srv is the operator's decision.
func checkInitDir(dir string, force bool) (fixed []string, err error) {
	uid := os.Geteuid()
	real, rest := existingPart(dir)
	if rest == "" {
		st, err := os.Stat(real)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("--dir %s is not a directory", dir)
		}
		if owner, ok := ownerOf(st); ok && owner != uid {
			if !force || uid != 0 {
				return nil, fmt.Errorf("--dir %s is owned by another user (uid %d, this is uid %d): another account could change the files init writes there; use a directory of your own, or run init as root with --force-permissions to make it root's", dir, owner, uid)
			}
			if err := os.Chown(real, 0, 0); err != nil {
				return nil, fmt.Errorf("--force-permissions: %w", err)
			}
			fixed = append(fixed, fmt.Sprintf("changed the owner of %s from uid %d to root", real, owner))
		}
		if mode := st.Mode().Perm(); mode&0o022 != 0 {
			if !force {
				return nil, fmt.Errorf("--dir %s is writable by group or others (mode %04o): another account could change the files init writes there; run chmod go-w %s, or give --force-permissions", dir, mode, real)
			}
			if err := os.Chmod(real, mode&^0o022); err != nil {
				return nil, fmt.Errorf("--force-permissions: %w", err)
			}
			fixed = append(fixed, fmt.Sprintf("changed the mode of %s from %04o to %04o", real, mode, mode&^0o022))
		}
		real = filepath.Dir(real)
	}
	for d := real; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return nil, err
		}
		if owner, ok := ownerOf(st); ok && owner != uid && owner != 0 {
			return nil, fmt.Errorf("%s, above --dir %s, is owned by another user (uid %d): that account could replace --dir; choose a --dir under directories of your own or root's", d, dir, owner)
		}
		if st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0 {
			return nil, fmt.Errorf("%s, above --dir %s, is writable by group or others (mode %04o): another account could replace --dir; run chmod go-w %s, or choose another --dir (--force-permissions changes --dir only)", d, dir, st.Mode().Perm(), d)
		}
		if d == filepath.Dir(d) {
			return fixed, nil
		}
	}
}

// existingPart splits the absolute path dir into its longest existing part, with symbolic links
// resolved, and the rest, which does not exist yet ("" when dir exists).
func existingPart(dir string) (real, rest string) {
	for d := dir; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			rel, _ := filepath.Rel(d, dir)
			if rel == "." {
				rel = ""
			}
			return r, rel
		} else if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			return d, ""
		}
	}
}
