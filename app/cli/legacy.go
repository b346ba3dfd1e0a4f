package cli

import (
	"flag"
	"strings"
)

// newFlags and parse serve commands written as a run function (command.run) rather than a
// setup: newFlags makes the flag set, parse parses it. Help is still generated from the flags
// declared on the set (printed once, on stdout, exit 0), and errors are reported like any
// command's.
//
// name is the command's path ("exit load-dump"). usage is its usage line, optionally followed
// by a blank line and a paragraph of help: "exit load-dump --db DSN DIR\n\nRuns DIR's ...".
// From the line, parse keeps the positional arguments (DIR), the value names (--db DSN) and
// which flags are required (those outside brackets; shown as such, checked by the command);
// the flags themselves, and so the usage line printed, come from the set.
func (p *prog) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if p.legacyUsage == nil {
		p.legacyUsage = map[*flag.FlagSet]string{}
	}
	p.legacyUsage[fs] = usage
	return fs
}

// nonEmptyFlags marks flags of fs (made by newFlags) that parse refuses with an empty value,
// as cmdline.nonEmpty does.
func (p *prog) nonEmptyFlags(fs *flag.FlagSet, names ...string) {
	if p.legacyNonEmpty == nil {
		p.legacyNonEmpty = map[*flag.FlagSet][]string{}
	}
	p.legacyNonEmpty[fs] = append(p.legacyNonEmpty[fs], names...)
}

// parse parses fs (made by newFlags) with flags before or after positional arguments and
// returns the positional ones; ok=false means the caller returns code.
func (p *prog) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	path := fs.Name()
	words := strings.Fields(path)
	line, help, _ := strings.Cut(p.legacyUsage[fs], "\n\n")
	u := readUsageLine(line, path, fs)
	cmd := &command{
		name: words[len(words)-1],
		args: u.positional,
		help: help,
		setup: func(c *cmdline) runFunc {
			fs.VisitAll(func(f *flag.Flag) { c.Var(f.Value, f.Name, f.Usage) })
			c.values = u.values
			c.require(u.required...)
			c.requiredShownOnly = true // the command checks them, with its own message
			c.nonEmpty(p.legacyNonEmpty[fs]...)
			return nil
		},
	}
	if p.running != nil && p.running.name == cmd.name {
		cmd.summary = p.running.summary
	}
	c := p.cmdlineFor(cmd, path)
	cmd.setup(c)
	return p.parseArgs(c, cmd, args)
}

// usageLine is what a hand-written usage line says beyond the flags.
type usageLine struct {
	positional string            // "DIR"
	values     map[string]string // flag name → value name: "db" → "DSN"
	required   []string          // flags outside brackets
}

// readUsageLine reads "exit load-dump --db DSN [--jobs N] DIR": what is neither the command's
// path, a flag nor a flag's value is positional; a flag outside brackets is required.
func readUsageLine(line, path string, fs *flag.FlagSet) usageLine {
	u := usageLine{values: map[string]string{}}
	toks := strings.Fields(line)
	for _, w := range strings.Fields(path) {
		if len(toks) > 0 && toks[0] == w {
			toks = toks[1:]
		}
	}
	var pos []string
	depth := 0
	valueOf := ""
	for _, tok := range toks {
		t := strings.Trim(tok, "[]|")
		inBrackets := depth > 0 || strings.HasPrefix(tok, "[")
		depth += strings.Count(tok, "[") - strings.Count(tok, "]")
		switch {
		case valueOf != "":
			u.values[valueOf] = t
			valueOf = ""
		case strings.HasPrefix(t, "-"):
			name, value, hasValue := strings.Cut(strings.TrimLeft(t, "-"), "=")
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			if !inBrackets {
				u.required = append(u.required, name)
			}
			if hasValue {
				u.values[name] = value
			} else if !isBoolFlag(f) {
				valueOf = name
			}
		case t == "" || t == "flags" || t == "options" || inBrackets:
		default:
			pos = append(pos, tok)
		}
	}
	u.positional = strings.Join(pos, " ")
	return u
}
