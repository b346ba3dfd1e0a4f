package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/idvault/idvault/app/config"
)

func configCommand() *command {
	return &command{
		name:    "config",
		summary: "config check: print the effective configuration and every problem in it",
		subs: []*command{
			{name: "check", summary: "print the effective configuration (secrets redacted) and every problem in it (exit 3 if any)", setup: configCheck},
		},
	}
}

func configCheck(c *cmdline) runFunc {
	var cf configFlags
	cf.register(c)
	return func(_ context.Context, args []string) int {
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		p := c.p
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
}
