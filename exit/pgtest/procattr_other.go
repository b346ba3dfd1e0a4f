//go:build !linux

package pgtest

import "syscall"

// serverAttr runs postgres as cred in a process group of its own. There is no parent-death
// signal outside Linux: a test process killed outright leaves its server running.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
