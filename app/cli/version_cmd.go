package cli

import (
	"context"
	"fmt"
	"runtime"
)

// BuildInfo is stamped into the binary by `make build` (-ldflags -X main.version=...).
type BuildInfo struct {
	// Version is a semantic version: the latest vX.Y.Z tag as `git describe` gives it, or
	// 0.1.0-dev before the first release.
	Version string
	// Commit is the full commit hash, with "-dirty" when the tree had uncommitted changes.
	Commit string
	// Date is the build time in UTC, RFC 3339.
	Date string
}

// devVersion is the version of a binary built without the Makefile's ldflags.
const devVersion = "0.0.0-dev"

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version, the commit and the build date",
		setup: func(c *cmdline) runFunc {
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("takes no arguments")
				}
				b := c.p.env.Build
				unknown := "unknown (build with `make build` to stamp it)"
				v, commit, date := or(b.Version, devVersion), or(b.Commit, unknown), or(b.Date, unknown)
				fmt.Fprintf(c.p.stdout, "idvault %s\ncommit: %s\nbuilt:  %s\ngo:     %s %s/%s\n",
					v, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return exitOK
			}
		},
	}
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
