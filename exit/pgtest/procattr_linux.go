package pgtest

import "syscall"

// serverAttr runs postgres as cred in a process group of its own, told to stop (SIGINT, a fast
// shutdown) if the test process dies first.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT, Setpgid: true}
}
