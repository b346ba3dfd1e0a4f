package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// command is one command or subcommand of idvault. A command declares its flags once, in
// setup: setup registers them on the command line it is given and returns the function that
// runs with the parsed values. Help, usage lines and shell completion are all generated from
// that one declaration, so they cannot disagree with what the command accepts.
//
// A group (app, config) has subs; it may also have its own setup, which runs when the first
// argument is not one of its subcommands.
//
// To add a command: a function returning its *command, in a file named for it, listed in
// commands() (cli.go) or in its group's subs. In setup, declare the flags on c (c.String,
// c.Bool, ...; name a flag's value in backquotes: "data `FILE`"), mark required ones with
// c.require, and return the function that runs with the positional arguments; report a bad
// command line with c.usageError. help_test.go then checks the help rules on it, and
// TestReadmeDocumentsEveryCommandAndFlag that the README (or, for the exit tool, its guide)
// documents it.
type command struct {
	name string
	// args is the positional part of the usage line ("ID", "DIR"); empty for none.
	args string
	// summary is one line, lower case, shown in the parent's list and atop the help.
	summary string
	// help is an optional paragraph printed under the usage line.
	help  string
	setup func(c *cmdline) runFunc
	subs  []*command
	// hidden commands (the shell completion helper) are left out of help and completion.
	hidden bool
	// raw commands get their arguments unparsed (the completion helper: they are words typed
	// for another command).
	raw bool
}

// runFunc runs a command with its positional arguments; it returns the exit code.
type runFunc func(ctx context.Context, args []string) int

// cmdline is what setup declares flags on: a flag set, plus the flags that are required.
// Flag usage strings name their value in backquotes, as the flag package expects: "write the
// copy to `FILE`" shows as --out FILE.
type cmdline struct {
	*flag.FlagSet
	p        *prog
	cmd      *command
	path     string // "app create"
	required []string
	// nonEmptyFlags may not be given an empty value (nonEmpty).
	nonEmptyFlags []string
	// positional, when set, recognises a positional argument that may begin with "-" (an app ID
	// in its URL form, 1 time in 64): parseArgs takes it as one, not as an unknown flag.
	positional func(arg string) bool
}

// require marks flags that must be given; parse refuses a command line without them.
func (c *cmdline) require(names ...string) { c.required = append(c.required, names...) }

// nonEmpty marks flags that may not be given an empty value: parse refuses "--data=" or
// --data "$UNSET", which the command would otherwise take for the flag left out (another data
// file, the local-dev profile for --config).
func (c *cmdline) nonEmpty(names ...string) { c.nonEmptyFlags = append(c.nonEmptyFlags, names...) }

// usageError reports a bad command line (msg, then the usage line) and returns exitUsage.
func (c *cmdline) usageError(format string, a ...any) int {
	return c.p.usageError(c.cmd, c.path, fmt.Sprintf(format, a...))
}

// subcommand returns the subcommand of c named name (hidden ones too), or nil.
func (c *command) subcommand(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// dispatch runs cmd (reached by path, "" for the program itself) with args.
func (p *prog) dispatch(ctx context.Context, cmd *command, path string, args []string) int {
	if len(cmd.subs) > 0 && len(args) > 0 {
		if sub := cmd.subcommand(args[0]); sub != nil {
			return p.dispatch(ctx, sub, joinPath(path, sub.name), args[1:])
		}
		if args[0] == "help" {
			return p.helpFor(ctx, cmd, path, args[1:])
		}
	}
	if cmd.setup == nil {
		if len(args) > 0 && isHelp(args[0]) {
			p.printHelp(p.stdout, cmd, path)
			return exitOK
		}
		if len(args) > 0 {
			return p.unknownCommand(cmd, path, args[0])
		}
		p.printHelp(p.stderr, cmd, path)
		return exitUsage
	}
	c := p.cmdlineFor(cmd, path)
	run := cmd.setup(c)
	if cmd.raw {
		return run(ctx, args)
	}
	pos, code, ok := p.parseArgs(c, cmd, args)
	if !ok {
		return code
	}
	return run(ctx, pos)
}

// unknownCommand reports a first word that is none of cmd's subcommands: the suggestion, when
// one is close, and one line pointing at --help; the list of commands is --help's, so a typo does
// not push the error off the screen.
func (p *prog) unknownCommand(cmd *command, path, word string) int {
	fmt.Fprintf(p.stderr, "%s: unknown %s %q%s\n", progPath(path), unknownWhat(path), word, didYouMean(word, subcommandNames(cmd), quoted))
	fmt.Fprintf(p.stderr, "Run '%s --help' for the list of %ss.\n", progPath(path), unknownWhat(path))
	return exitUsage
}

// helpFor answers "idvault [group] help [command...]": what the named command's --help prints.
func (p *prog) helpFor(ctx context.Context, cmd *command, path string, names []string) int {
	for _, n := range names {
		sub := cmd.subcommand(n)
		if sub == nil {
			return p.unknownCommand(cmd, path, n)
		}
		cmd, path = sub, joinPath(path, n)
	}
	return p.dispatch(ctx, cmd, path, []string{"--help"})
}

func (p *prog) cmdlineFor(cmd *command, path string) *cmdline {
	fs := flag.NewFlagSet(progPath(path), flag.ContinueOnError)
	// The flag package would print its own messages and usage (to stderr, and once more on
	// --help): parse reports errors itself, and help goes once to stdout.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &cmdline{FlagSet: fs, p: p, cmd: cmd, path: path}
}

// parseArgs parses flags that may come before or after positional arguments ("app show ID
// --json"), and returns the positional ones. ok=false means the caller returns code: 0 after
// --help (printed once, on stdout), 2 after a usage error (printed on stderr).
func (p *prog) parseArgs(c *cmdline, cmd *command, args []string) (pos []string, code int, ok bool) {
	fs := c.FlagSet
	pos, args = c.dashedPositionals(args)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				p.printHelp(p.stdout, cmd, c.path)
				return nil, exitOK, false
			}
			return nil, p.usageError(cmd, c.path, dashDash(err.Error())+unknownFlagHint(err, fs)), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range c.required {
		if !set[name] {
			return nil, p.usageError(cmd, c.path, "--"+name+" is required"), false
		}
	}
	for _, name := range c.nonEmptyFlags {
		if set[name] && fs.Lookup(name).Value.String() == "" {
			return nil, p.usageError(cmd, c.path, "--"+name+" is given an empty value (an unset variable?): give one, or leave the flag out"), false
		}
	}
	return pos, 0, true
}

// dashedPositionals moves out of args, into pos, the arguments that begin with "-" but are
// positional ones (c.positional) rather than flags: no flag of the command has that name, and
// they are not the value of the flag before them. Arguments after "--" are left as they are.
// They come first among the positional arguments (the commands that set c.positional take one).
func (c *cmdline) dashedPositionals(args []string) (pos, rest []string) {
	if c.positional == nil {
		return nil, args
	}
	valueNext := false // the argument before is a flag that takes the next one as its value
	for i, a := range args {
		if a == "--" {
			return pos, append(rest, args[i:]...)
		}
		name, hasValue := strings.TrimLeft(a, "-"), strings.Contains(a, "=")
		name, _, _ = strings.Cut(name, "=")
		isFlag := strings.HasPrefix(a, "-") && len(a) > 1
		switch {
		case valueNext:
			valueNext = false
			rest = append(rest, a)
		case isFlag && c.Lookup(name) == nil && c.positional(a):
			pos = append(pos, a)
		default:
			if f := c.Lookup(name); isFlag && f != nil && !hasValue && !isBoolFlag(f) {
				valueNext = true
			}
			rest = append(rest, a)
		}
	}
	return pos, rest
}

// usageError prints msg and the command's usage line on stderr and returns exitUsage.
func (p *prog) usageError(cmd *command, path, msg string) int {
	fmt.Fprintf(p.stderr, "%s: %s\n", progPath(path), msg)
	for _, line := range usageLines(p, cmd, path) {
		fmt.Fprintf(p.stderr, "Usage: %s\n", wrap(line, 100, "         "))
	}
	fmt.Fprintf(p.stderr, "Run '%s --help' for more.\n", progPath(path))
	return exitUsage
}

// dashDash rewrites the flag package's "-name" spelling in its error messages as "--name",
// the spelling of every help text and of the README.
func dashDash(msg string) string {
	for _, marker := range []string{"defined: -", "flag: -", "flag -", "argument: -"} {
		msg = strings.Replace(msg, marker, marker+"-", 1)
	}
	return msg
}

// flagInfo is one declared flag as help shows it.
type flagInfo struct {
	name, value, usage, def string
	required                bool
}

// flagsOf lists the flags setup declares on cmd: required ones first, then by name.
func flagsOf(p *prog, cmd *command, path string) []flagInfo {
	if cmd.setup == nil {
		return nil
	}
	c := p.cmdlineFor(cmd, path)
	cmd.setup(c)
	var out []flagInfo
	c.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		if isBoolFlag(f) {
			value = ""
		} else if value == "" || value == "value" || value == "string" {
			value = "VALUE"
		} else if value == "duration" {
			value = "DURATION"
		} else if value == "int" || value == "uint" {
			value = "N"
		}
		fi := flagInfo{name: f.Name, value: value, usage: usage, required: slices.Contains(c.required, f.Name)}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fi.def = f.DefValue
		}
		out = append(out, fi)
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].required && !out[j].required })
	return out
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// synopsis is "--name NAME" for a flag, bracketed when optional.
func (f flagInfo) synopsis() string {
	s := "--" + f.name
	if f.value != "" {
		s += " " + f.value
	}
	if !f.required {
		s = "[" + s + "]"
	}
	return s
}

// usageLines are the command's usage lines: one for the command itself when it runs (every
// flag listed), one per visible subcommand.
func usageLines(p *prog, cmd *command, path string) []string {
	var lines []string
	if cmd.setup != nil {
		parts := []string{progPath(path)}
		for _, f := range flagsOf(p, cmd, path) {
			parts = append(parts, f.synopsis())
		}
		if cmd.args != "" {
			parts = append(parts, cmd.args)
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	if len(cmd.subs) > 0 && cmd.setup == nil {
		lines = append(lines, progPath(path)+" <command> [flags]")
	}
	return lines
}

// printHelp writes the help of cmd: usage, summary, flags, and subcommands with their own
// usage lines.
func (p *prog) printHelp(w io.Writer, cmd *command, path string) {
	for _, line := range usageLines(p, cmd, path) {
		fmt.Fprintf(w, "Usage: %s\n", wrap(line, 100, "         "))
	}
	if cmd.summary != "" {
		fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(cmd.summary[:1]), cmd.summary[1:])
	}
	if cmd.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.help))
	}
	if flags := flagsOf(p, cmd, path); len(flags) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		width := 0
		for _, f := range flags {
			width = max(width, len(f.name)+len(f.value)+3)
		}
		for _, f := range flags {
			head := "--" + f.name
			if f.value != "" {
				head += " " + f.value
			}
			text := f.usage
			if f.required && !strings.Contains(text, "required") {
				text += " (required)"
			}
			if f.def != "" {
				text += fmt.Sprintf(" (default %s)", f.def)
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, head, wrap(text, 100-width-4, strings.Repeat(" ", width+4)))
		}
	}
	var subs []*command
	for _, s := range cmd.subs {
		if !s.hidden {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCommands:")
	if path == "" {
		for _, s := range subs {
			fmt.Fprintf(w, "  %-11s %s\n", s.name, s.summary)
		}
		fmt.Fprintln(w, "\nRun 'idvault <command> --help' for a command's flags.")
		return
	}
	for _, s := range subs {
		for _, line := range usageLines(p, s, joinPath(path, s.name)) {
			fmt.Fprintf(w, "  %s\n", wrap(line, 98, "          "))
		}
		fmt.Fprintf(w, "      %s\n", s.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's help.\n", progPath(path))
}

// wrap breaks s into lines of at most width characters at spaces, indenting continuations.
func wrap(s string, width int, indent string) string {
	if width < 20 {
		width = 20
	}
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case col+1+len(word) > width:
			b.WriteString("\n" + indent)
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}

// unknownWhat names what an unknown first word was taken for.
func unknownWhat(path string) string {
	if path == "" {
		return "command"
	}
	return "subcommand"
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + " " + name
}

func progPath(path string) string { return strings.TrimSpace("idvault " + path) }

func quoted(s string) string { return fmt.Sprintf("%q", s) }

func isHelp(s string) bool { return s == "-h" || s == "--help" || s == "-help" || s == "help" }
