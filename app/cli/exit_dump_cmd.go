package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/encryption"
)

// exitGenDumpCommand is `idvault exit gen-dump`: a synthetic exit dump (exit/dump/gen).
func exitGenDumpCommand() *command {
	return &command{
		name:    "gen-dump",
		summary: "write a synthetic dump (SQL files, identities, ciphertexts, manifest)",
		help: "Writes a synthetic exit dump: 1_schema.sql, 2_data.sql, 3_indexes.sql (exit/dump/FORMAT.md),\n" +
			"app.json, identities.jsonl, manifest.jsonl, SHA256SUMS and data/, every file new with mode 0600 (a\n" +
			"name that exists, a link included, is refused). The same --seed and flags give byte-identical files. The app\n" +
			"secret comes from --app-secret, --app-secret-file or " + appSecretEnv + ", else from --seed.",
		setup: genDumpSetup,
	}
}

// genDumpSetup declares gen-dump's flags.
func genDumpSetup(c *cmdline) runFunc {
	fs := c.FlagSet
	out := fs.String("out", "", "directory `DIR` to write the dump into (none of the names of a dump may exist in it)")
	users := fs.Int("users", gen.DefaultOptions.Users, "users of the main app")
	groups := fs.Int("groups", gen.DefaultOptions.Groups, "groups of the main app")
	resources := fs.Int("resources", gen.DefaultOptions.Resources, "ordinary ciphertexts (negative cases come on top)")
	provisional := fs.Int("provisional", 0, "provisional identities (0: users/4, at least 4)")
	formats := fs.String("formats", "2-11", "formats to cycle through: a list and/or ranges, e.g. 2,9-11")
	big := fs.Int("big", 0, "extra multi-MiB ciphertexts (2 to 5 MiB, stream formats)")
	provOnly := fs.Int("provisional-only", 0, "extra ciphertexts whose key is shared only with a provisional identity nobody\n"+
		"claimed (encrypt with shareWithSelf false): only that identity of identities.jsonl opens them")
	seed := fs.Uint64("seed", 1, "seed: the same seed gives the same dump")
	appSecret := fs.String("app-secret", "", "main app `SECRET` (base64, 64 bytes); default derived from --seed. Shown to every\n"+
		"user by ps: prefer --app-secret-file or "+appSecretEnv)
	appSecretFile := fs.String("app-secret-file", "", "read the main app secret (base64, 64 bytes) from `FILE`")
	decoys := fs.Int("decoy-apps", 0, "other apps in the dump whose rows must never serve the main app")
	c.require("out")
	c.nonEmpty("out", "formats", "app-secret", "app-secret-file")
	return func(ctx context.Context, args []string) int {
		p := c.p
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		fv, err := parseFormats(*formats)
		if err != nil {
			fmt.Fprintf(p.stderr, "idvault exit gen-dump: --formats: %v\n", err)
			return exitUsage
		}
		opts := gen.Options{Users: *users, Groups: *groups, Resources: *resources, Provisional: *provisional,
			Formats: fv, Big: *big, ProvisionalOnly: *provOnly, Seed: *seed, DecoyApps: *decoys}
		if opts.AppSecret, err = genDumpAppSecret(p, *appSecret, *appSecretFile); err != nil {
			fmt.Fprintf(p.stderr, "idvault exit gen-dump: %v\n", err)
			return exitUsage
		}
		return genDump(ctx, p, *out, opts)
	}
}

// genDump writes the dump into out, with progress on a terminal and a summary.
func genDump(ctx context.Context, p *prog, out string, opts gen.Options) int {
	pr := newProgress(p.stderr, "generating", 0)
	opts.Progress = pr.Update
	sum, err := gen.Generate(ctx, out, opts)
	if err != nil {
		pr.Fail()
		fmt.Fprintln(p.stderr, failure("exit gen-dump", err))
		return exitFail
	}
	pr.Done(fmt.Sprintf("dump written to %s: %d users, %d devices, %d group blocks, %d key publishes, %d ciphertexts + %d negative cases, %d decoy apps; app ID %s",
		out, sum.Rows["users"], sum.Rows["devices"], sum.Rows["user_groups"], sum.Rows["key_publishes"],
		sum.Resources, sum.Negatives, len(sum.DecoyIDs), base64.StdEncoding.EncodeToString(sum.AppID)))
	return exitOK
}

// appSecretEnv is the environment variable gen-dump reads the app secret from when no flag
// gives it.
const appSecretEnv = "IDVAULT_APP_SECRET"

// genDumpAppSecret returns the app secret from --app-secret, --app-secret-file or
// IDVAULT_APP_SECRET (at most one flag; the variable only without a flag), or nil for a
// secret derived from the seed. Errors never quote the secret.
func genDumpAppSecret(p *prog, flag, file string) ([]byte, error) {
	var src, text string
	switch {
	case flag != "" && file != "":
		return nil, fmt.Errorf("give --app-secret or --app-secret-file, not both")
	case flag != "":
		src, text = "--app-secret", flag
	case file != "":
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--app-secret-file: %w", err)
		}
		src, text = "--app-secret-file", string(raw)
	default:
		if text = p.getenv(appSecretEnv); text != "" {
			src = appSecretEnv
		}
	}
	if src == "" {
		return nil, nil
	}
	secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(secret) != 64 {
		return nil, fmt.Errorf("%s must be the base64 of a 64-byte app secret", src)
	}
	return secret, nil
}

// parseFormats reads "2,5,9-11".
func parseFormats(s string) ([]encryption.Version, error) {
	var out []encryption.Version
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%q is not a format number", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of formats", part)
			}
		}
		for v := a; v <= b; v++ {
			if v < 2 || v > 11 {
				return nil, fmt.Errorf("format %d cannot be generated (2 to 11)", v)
			}
			out = append(out, encryption.Version(v))
		}
	}
	return out, nil
}

// exitLoadDumpCommand is `idvault exit load-dump`: a dump's SQL files into PostgreSQL.
func exitLoadDumpCommand() *command {
	return &command{
		name:    "load-dump",
		args:    "DIR",
		summary: "load a dump's numbered SQL files into PostgreSQL",
		help: "Runs DIR's numbered SQL files in order (COPY blocks through the COPY protocol), one transaction\n" +
			"per file; the same result as `psql -v ON_ERROR_STOP=1 -f FILE` for each file. Load into an empty\n" +
			"database: a database that already holds the dump's tables is refused, unchanged.\n\n" +
			"A dump comes from outside: every statement is checked before anything runs, and only those of an\n" +
			"exit dump are allowed (the CREATE TABLE, COPY ... FROM stdin, ADD PRIMARY KEY and CREATE INDEX of\n" +
			"an exit dump (exit/dump/FORMAT.md), and pg_dump's session settings and OWNER TO). Any other statement stops the load\n" +
			"with its file and line, before anything ran.",
		setup: func(c *cmdline) runFunc {
			db := dbFlag(c, "of the empty database to load into: postgres://... or key=value")
			return func(ctx context.Context, args []string) int {
				dsn := db()
				if dsn == "" || len(args) != 1 {
					fmt.Fprintln(c.p.stderr, "idvault exit load-dump: --db DSN (or IDVAULT_EXIT__DB) and one dump directory are required")
					return exitUsage
				}
				return loadDump(ctx, c.p, dsn, args[0])
			}
		},
	}
}

// loadDump loads the dump in dir into the database dsn names.
func loadDump(ctx context.Context, p *prog, dsn, dir string) int {
	pr := newProgress(p.stderr, "loading", 0)
	sum, err := dump.Load(ctx, dsn, dir, func(file string, done, total int64) { pr.Update(file, done, total) })
	if err != nil {
		pr.Fail()
		var le *dump.LoadError
		if errors.Is(err, context.Canceled) && errors.As(err, &le) {
			fmt.Fprintf(p.stderr, "idvault exit load-dump: interrupted while loading %s (rolled back)\n", printable(le.File))
		} else {
			fmt.Fprintln(p.stderr, failure("exit load-dump", err))
		}
		if len(sum.Files) > 0 {
			fmt.Fprintf(p.stderr, "idvault exit load-dump: already committed: %s\n", strings.Join(sum.Files, ", "))
		}
		return exitFail
	}
	pr.Done(fmt.Sprintf("dump %s loaded: %d files, %d statements, %d rows copied", dir, len(sum.Files), sum.Statements, sum.CopyRows))
	return exitOK
}
