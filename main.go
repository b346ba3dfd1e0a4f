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
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	// The first Ctrl-C (or SIGTERM, or a hangup) asks the command to stop cleanly; the signals
	// then get their default action back, so a second one ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.Env{
		Embedded: defaultConfig, Environ: os.Environ(), Stdin: os.Stdin,
		Build: cli.ReadBuild(version, revision), License: license, Notices: notices,
	})
	stop()
	os.Exit(code)
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
