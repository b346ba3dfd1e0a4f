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

// Set at build time by `make build` and `make release`: version is the release tag when the
// commit is tagged (-ldflags "-X main.version=v1.2.3"), revision the commit, used only when the
// build information Go embeds has none (cli.ReadBuild).
var version, revision string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C (or SIGTERM) asks the command to stop cleanly; the signals then get
	// their default action back, so a second one ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.Env{
		Embedded: defaultConfig, Environ: os.Environ(), Stdin: os.Stdin,
		Build: cli.ReadBuild(version, revision),
	})
	stop()
	os.Exit(code)
}
