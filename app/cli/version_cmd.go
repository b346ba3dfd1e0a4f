package cli

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
)

// BuildInfo says which idvault this is: `idvault version`, `idvault --version`, the console
// and the idvault_build_info metric show it.
type BuildInfo struct {
	// Version is the release tag the binary was built from ("v1.2.3"), or "devel".
	Version string
	// Revision is the VCS commit, with "-dirty" when the tree had uncommitted changes, or
	// "unknown" when the build recorded none.
	Revision string
	// GoVersion is the Go toolchain that built the binary ("go1.26.8").
	GoVersion string
}

// develVersion is the version of a binary built from anything but a release tag.
const develVersion = "devel"

// releaseVersion matches a release tag: vMAJOR.MINOR.PATCH with an optional pre-release that
// is not a Go pseudo-version (v0.0.0-20260101120000-abcdefabcdef is a commit, not a release).
var (
	releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	pseudoVersion  = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)
)

// ReadBuild is the build information of the running binary. stamped is the release tag set at
// build time (`make build` and `make release` pass -ldflags "-X main.version=vX.Y.Z" when the
// commit is tagged); without it, the module version Go records is used when it is a release
// (`go install idvault@v1.2.3`), else "devel". The commit and the Go version come from the
// build information Go embeds (runtime/debug.ReadBuildInfo); stampedRevision (-X
// main.revision) stands in for the commit where Go records none: a build in a git worktree,
// whose .git is a file Go does not follow.
func ReadBuild(stamped, stampedRevision string) BuildInfo {
	b := BuildInfo{Version: stamped, Revision: stampedRevision, GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b.withDefaults()
	}
	b.GoVersion = info.GoVersion
	if b.Version == "" && isRelease(info.Main.Version) {
		b.Version = info.Main.Version
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		b.Revision = rev
		if modified {
			b.Revision += "-dirty"
		}
	}
	return b.withDefaults()
}

// isRelease says whether v is a release tag rather than a pseudo-version, a dirty build or
// Go's "(devel)".
func isRelease(v string) bool {
	return releaseVersion.MatchString(v) && !pseudoVersion.MatchString(v)
}

func (b BuildInfo) withDefaults() BuildInfo {
	b.Version = cmp.Or(b.Version, develVersion)
	b.Revision = cmp.Or(b.Revision, "unknown")
	b.GoVersion = cmp.Or(b.GoVersion, runtime.Version())
	return b
}

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version, the commit and the Go version",
		setup: func(c *cmdline) runFunc {
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					return c.usageError("takes no arguments")
				}
				c.p.printVersion()
				return exitOK
			}
		},
	}
}

// printVersion answers `idvault version` and `idvault --version`.
func (p *prog) printVersion() {
	b := p.env.Build.withDefaults()
	fmt.Fprintf(p.stdout, "idvault %s\ncommit: %s\ngo:     %s %s/%s\n",
		b.Version, b.Revision, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}
