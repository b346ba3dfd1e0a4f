package cli

import (
	"context"
	"fmt"
)

// licenseCommand prints the license a release binary is distributed under, and the notices of
// the code compiled into it, which a binary downloaded alone would otherwise not carry: the
// project's LICENSE, then THIRD_PARTY_NOTICES (both embedded by main; .ci/notices writes the
// second from the module cache, `make notices`).
func licenseCommand() *command {
	return &command{
		name:    "license",
		summary: "print the license (Apache-2.0) and the third-party notices compiled into the binary",
		setup: func(c *cmdline) runFunc {
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("takes no arguments")
				}
				if len(c.p.env.License) == 0 {
					fmt.Fprintln(c.p.stderr, "idvault: license: this build carries no license text; it is the LICENSE file of the source")
					return exitFail
				}
				c.p.stdout.Write(c.p.env.License)
				if len(c.p.env.Notices) > 0 {
					fmt.Fprintln(c.p.stdout)
					c.p.stdout.Write(c.p.env.Notices)
				}
				return exitOK
			}
		},
	}
}
