// Package cli is idvault's command line: serve, app, config check, backup, version. Run is the
// whole program, so tests can run it in-process exactly as a user would.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"idvault/app/config"
	"idvault/app/exitserver"
)

// Env is what the program receives from main.
type Env struct {
	// Embedded is the config.yaml compiled into the binary (the local-dev profile).
	Embedded []byte
	// Environ is os.Environ().
	Environ []string
	// Version is the build version.
	Version string
	// Ready, when set, receives the server's listen address once it accepts connections (tests).
	Ready func(addr string)
	// OpenExitDB, when set, replaces the exit server's database (tests with a fake).
	OpenExitDB func(ctx context.Context, c config.Exit) (exitserver.DB, func(), error)
}

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitUsage  = 2
	exitConfig = 3
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, p *prog, args []string) int
}

// prog carries the output streams and environment through a command.
type prog struct {
	env    Env
	stdout io.Writer
	stderr io.Writer
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP server (fake authentication, identity server, verification API, admin API)", runServe},
		{"app", "manage apps: create, list, show, rotate-token, delete", runApp},
		{"config", "config check: print the effective configuration and every problem in it", runConfig},
		{"backup", "write a consistent hot copy of the data file", runBackup},
		{"exit", "exit tooling: the exit server, gen-dump, load-dump, import, decrypt (see 'idvault exit --help')", runExit},
		{"version", "print the version", runVersion},
	}
}

// Run runs idvault with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, env Env) int {
	p := &prog{env: env, stdout: stdout, stderr: stderr}
	if len(args) == 0 || isHelp(args[0]) {
		p.usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, p, args[1:])
		}
	}
	fmt.Fprintf(stderr, "idvault: unknown command %q\n\n", args[0])
	p.usage(stderr)
	return exitUsage
}

func (p *prog) usage(w io.Writer) {
	fmt.Fprintln(w, "idvault: identities, verification codes and exit tooling for end-to-end encrypted apps")
	fmt.Fprintln(w, "\nUsage: idvault <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'idvault <command> --help' for a command's flags.")
}

func isHelp(s string) bool { return s == "-h" || s == "--help" || s == "help" }

// newFlags makes a flag set whose --help prints usage to stdout and whose errors go to stderr.
func (p *prog) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(p.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: idvault %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags that may come before or after positional arguments, and returns the
// positional ones. ok=false means the caller should return code.
func (p *prog) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(p.stdout)
				fs.Usage()
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
		if rest[0] == "--" {
			return append(pos[:len(pos)-1], args...), 0, true
		}
	}
}

func runVersion(_ context.Context, p *prog, args []string) int {
	fs := p.newFlags("version", "version")
	if _, code, ok := p.parse(fs, args); !ok {
		return code
	}
	v := p.env.Version
	if strings.TrimSpace(v) == "" {
		v = "dev"
	}
	fmt.Fprintf(p.stdout, "idvault %s\n", v)
	return exitOK
}
