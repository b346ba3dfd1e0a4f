// Command idvault: identities, verification codes and exit tooling for applications that use
// end-to-end encryption with Tanker-style identities. main only wires the process to the
// command line in app/cli.
package main

import (
	"context"
	_ "embed"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/idvault/idvault/app/cli"
)

// defaultConfig is the local-dev profile: the binary runs with no config file at all.
//
//go:embed config.yaml
var defaultConfig []byte

// license and notices travel with the binary (a release binary is downloaded alone): `idvault
// license` prints them. app/cli/THIRD_PARTY_NOTICES is written by `make notices` (.ci/notices).
var (
	//go:embed LICENSE
	license []byte
	//go:embed app/cli/THIRD_PARTY_NOTICES
	notices []byte
)

// Set at build time by `make build` and `make release`: version is the release tag when the
// commit is tagged (-ldflags "-X main.version=v1.2.3"), revision the commit, used only when the
// build information Go embeds has none (cli.ReadBuild).
var version, revision string

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	var stoppedBy os.Signal
	stopped := make(chan struct{})
	// The first Ctrl-C (or SIGTERM, or a hangup) asks the command to stop cleanly; the signals
	// then get their default action back, so a second one ends the process at once.
	go func() {
		defer close(stopped)
		if sig, ok := <-sigs; ok {
			stoppedBy = sig
			signal.Reset(stopSignals()...)
			cancel()
		}
	}()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.Env{
		Embedded: defaultConfig, Environ: os.Environ(), Stdin: os.Stdin,
		Build: cli.ReadBuild(version, revision), License: license, Notices: notices,
	})
	signal.Stop(sigs)
	close(sigs)
	<-stopped
	if code == 0 && stoppedBy == syscall.SIGHUP {
		hangUp()
	}
	os.Exit(code)
}

// hangUp ends the process by SIGHUP, its default action, once a hangup has stopped the command
// cleanly: whoever waits for the process sees that a hangup ended it (a shell's status 129),
// not a success. So a supervisor that restarts a server only when it fails does not leave it down
// after a stray `kill -HUP` (the unit `idvault init` writes has RestartForceExitStatus=SIGHUP,
// since systemd counts SIGHUP, like SIGTERM, as a clean end).
func hangUp() {
	signal.Reset(syscall.SIGHUP)
	_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
	time.Sleep(time.Second) // the signal is delivered meanwhile; the exit below is a fallback
	os.Exit(128 + int(syscall.SIGHUP))
}

// stopSignals are the signals that stop a command cleanly: Ctrl-C, SIGTERM, and SIGHUP (the
// terminal of a server run by hand closing), whose default action would end the process at once,
// cutting requests in flight. A SIGHUP ignored when the process started (nohup, or a supervisor
// that sets it so) stays ignored: Notify would otherwise install a handler and end the run that
// nohup was asked to keep alive.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
