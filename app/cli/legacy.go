package cli

import (
	"flag"
	"strings"
)

// newFlags and parse serve commands written as a run function (command.run) rather than a
// setup: newFlags makes the flag set, parse parses it. Help is still generated from the flags
// declared on the set (printed once, on stdout, exit 0), and errors are reported like any
// command's. name is the command's path ("exit gen-dump"); usage is its usage line, from which
// only the positional arguments are kept (the flags come from the set itself).
func (p *prog) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if p.legacyUsage == nil {
		p.legacyUsage = map[*flag.FlagSet]string{}
	}
	p.legacyUsage[fs] = usage
	return fs
}

// parse parses fs (made by newFlags) with flags before or after positional arguments and
// returns the positional ones; ok=false means the caller returns code.
func (p *prog) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	path := fs.Name()
	words := strings.Fields(path)
	cmd := &command{
		name: words[len(words)-1],
		args: positionalOf(p.legacyUsage[fs], path, fs),
		setup: func(c *cmdline) runFunc {
			fs.VisitAll(func(f *flag.Flag) { c.Var(f.Value, f.Name, f.Usage) })
			return nil
		},
	}
	if p.running != nil && p.running.name == cmd.name {
		cmd.summary, cmd.help = p.running.summary, p.running.help
	}
	c := p.cmdlineFor(cmd, path)
	cmd.setup(c)
	return p.parseArgs(c, cmd, args)
}

// positionalOf keeps the positional arguments of a usage line ("exit load-dump --db DSN DIR"
// gives "DIR"): what is neither the command's path, a flag, nor a flag's value.
func positionalOf(usage, path string, fs *flag.FlagSet) string {
	toks := strings.Fields(usage)
	for _, w := range strings.Fields(path) {
		if len(toks) > 0 && toks[0] == w {
			toks = toks[1:]
		}
	}
	var pos []string
	skip := false
	for _, tok := range toks {
		t := strings.Trim(tok, "[]|")
		switch {
		case skip:
			skip = false
		case strings.HasPrefix(t, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(t, "-"), "=")
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && !hasValue {
				skip = true
			}
		case t == "" || t == "flags" || t == "options":
		default:
			pos = append(pos, tok)
		}
	}
	return strings.Join(pos, " ")
}
