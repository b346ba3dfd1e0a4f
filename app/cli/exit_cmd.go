package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// exitSubcommand is one `idvault exit <name>` command.
type exitSubcommand struct {
	name    string
	usage   string // flags, shown in `idvault exit --help`
	summary string
	run     func(ctx context.Context, p *prog, args []string) int
}

// exitSubcommands lists the exit tooling commands. The exit server itself runs when
// `idvault exit` is given flags and no subcommand.
func exitSubcommands() []exitSubcommand {
	return []exitSubcommand{
		{"gen-dump", "--out DIR [--users N --groups N --resources N --formats LIST --big N --seed N --app-secret B64 --decoy-apps N]",
			"write a synthetic dump (SQL files, identities, ciphertexts, manifest)", runGenDump},
		{"load-dump", "--db DSN DIR", "load a dump's numbered SQL files into PostgreSQL", runLoadDump},
		{"import", "--url URL [--token T] [--batch N] FILE", "import private identities into an exit server, in batches", runExitImport},
		{"decrypt", "--url URL [--token T] --in DIR --out DIR [--jobs N]", "decrypt a tree of files through an exit server (resumable)", runExitDecrypt},
	}
}

func runExit(ctx context.Context, p *prog, args []string) int {
	if len(args) == 0 || isHelp(args[0]) {
		w := p.stdout
		if len(args) == 0 {
			w = p.stderr
		}
		printExitUsage(p, w)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if strings.HasPrefix(args[0], "-") {
		return runExitServer(ctx, p, args)
	}
	for _, s := range exitSubcommands() {
		if s.name == args[0] {
			return s.run(ctx, p, args[1:])
		}
	}
	fmt.Fprintf(p.stderr, "idvault exit: unknown subcommand %q\n\n", args[0])
	printExitUsage(p, p.stderr)
	return exitUsage
}

func printExitUsage(p *prog, w io.Writer) {
	fmt.Fprintf(w, "Usage: idvault %s\n  runs the exit server over a restored dump. Flags:\n", exitServeUsage)
	fs, _ := exitServerFlags(p)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nOr: idvault exit <subcommand> [flags]\n\nSubcommands:")
	for _, s := range exitSubcommands() {
		fmt.Fprintf(w, "  %-10s %s\n  %-10s   %s\n", s.name, s.summary, "", s.usage)
	}
	fmt.Fprintln(w, "\nRun 'idvault exit <subcommand> --help' for its flags.")
}
