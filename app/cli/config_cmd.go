package cli

import (
	"context"
	"fmt"
	"strings"

	"idvault/app/config"
)

func runConfig(_ context.Context, p *prog, args []string) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] != "check" {
		fmt.Fprintln(p.stderr, "Usage: idvault config check [--config FILE]\n\nPrints the effective configuration (secrets redacted) and every problem in it.")
		if len(args) > 0 && isHelp(args[0]) {
			return exitOK
		}
		return exitUsage
	}
	fs := p.newFlags("config check", "config check [--config FILE]")
	var cf configFlags
	cf.register(fs)
	if _, code, ok := p.parse(fs, args[1:]); !ok {
		return code
	}
	flags := map[string]any{}
	if cf.data != "" {
		flags["store.path"] = cf.data
	}
	l, err := config.Load(config.Sources{Embedded: p.env.Embedded, File: cf.file, Environ: p.env.Environ, Flags: flags})
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault: %v\n", err)
		return exitConfig
	}
	fmt.Fprintf(p.stdout, "# profile: %s\n", l.Profile)
	fmt.Fprintln(p.stdout, "# effective configuration (secrets redacted)")
	for _, line := range l.Redacted() {
		fmt.Fprintln(p.stdout, line)
	}
	if err := l.Err(); err != nil {
		lines := strings.Split(err.Error(), "\n")
		fmt.Fprintf(p.stdout, "\n# %d problem(s)\n", len(lines))
		for _, line := range lines {
			fmt.Fprintf(p.stdout, "problem: %s\n", line)
		}
		return exitConfig
	}
	fmt.Fprintln(p.stdout, "\n# configuration OK")
	return exitOK
}
