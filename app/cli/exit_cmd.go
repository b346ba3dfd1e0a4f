package cli

import (
	"context"
	"fmt"
)

// exitCommand is `idvault exit`: the exit tooling. The exit server itself runs when `idvault
// exit` is given flags and no subcommand.
func exitCommand() *command {
	return &command{
		name:    "exit",
		summary: "exit tooling: gen-dump, load-dump",
		subs:    exitSubcommands(),
		run:     runExitServer,
	}
}

// exitSubcommands lists the exit tooling commands.
func exitSubcommands() []*command {
	return []*command{
		{name: "gen-dump", summary: "write a synthetic dump (SQL files, identities, ciphertexts, manifest)", run: runGenDump},
		{name: "load-dump", args: "DIR", summary: "load a dump's numbered SQL files into PostgreSQL", run: runLoadDump},
	}
}

// runExitServer runs the exit HTTP server (`idvault exit --listen ... --db ... --app-id ...`).
func runExitServer(_ context.Context, p *prog, args []string) int {
	if len(args) == 0 {
		p.printHelp(p.stderr, exitCommand(), "exit")
		return exitUsage
	}
	fmt.Fprintln(p.stderr, "idvault exit: the exit server is not part of this build yet; see `idvault exit --help`")
	return exitUsage
}
