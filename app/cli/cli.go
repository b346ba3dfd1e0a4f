// Package cli is idvault's command line: serve, app, config check, backup, version,
// completion. Run is the whole program, so tests can run it in-process exactly as a user would.
//
// Every command is a *command in the table of commands(); each declares its flags once (see
// command.go), and help, usage lines and shell completion are generated from that.
package cli

import (
	"context"
	"io"
	"strings"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
)

// Env is what the program receives from main.
type Env struct {
	// Embedded is the config.yaml compiled into the binary (the local-dev profile).
	Embedded []byte
	// Environ is os.Environ().
	Environ []string
	// Build is the version, the commit and the Go version (see ReadBuild).
	Build BuildInfo
	// License is the project's LICENSE and Notices the third-party notices (THIRD_PARTY_NOTICES),
	// both compiled into the binary; `idvault license` prints them.
	License, Notices []byte
	// Stdin is where confirmations are read from; they are asked only when it is a terminal.
	Stdin io.Reader
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

// prog carries the output streams and environment through a command.
type prog struct {
	env    Env
	stdout io.Writer
	stderr io.Writer
}

// getenv is the value of the variable name in the command's environment, "" when unset. An
// empty value means unset, so of several settings the last non-empty one counts (an
// environment built with IDVAULT_APP_SECRET=s and later IDVAULT_APP_SECRET= still gives s):
// the same rule for the exit token, the exit DSN and gen-dump's app secret.
func (p *prog) getenv(name string) string {
	v := ""
	for _, kv := range p.env.Environ {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok && rest != "" {
			v = rest
		}
	}
	return v
}

// commands is the command table: one line per top-level command.
func commands() []*command {
	return []*command{
		serveCommand(),
		initCommand(),
		appCommand(),
		configCommand(),
		backupCommand(),
		exitCommand(),
		versionCommand(),
		licenseCommand(),
		completionCommand(),
		completeCommand(),
	}
}

// root is the program itself: a group of every command.
func root() *command {
	return &command{
		summary: "identities, verification codes and exit tooling for end-to-end encrypted apps",
		subs:    commands(),
	}
}

// Run runs idvault with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, env Env) int {
	p := &prog{env: env, stdout: stdout, stderr: stderr}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		p.printVersion()
		return exitOK
	}
	return p.dispatch(ctx, root(), "", args)
}
