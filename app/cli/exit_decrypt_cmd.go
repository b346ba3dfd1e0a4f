package cli

import (
	"bufio"
	"context"
	"fmt"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
)

// exitDecryptCommand is `idvault exit decrypt`: a tree of ciphertexts mirrored into clear
// files, resumable, with a report of every failure. Exit codes: 0 all done, 1 some file failed
// or the server stopped answering, 2 a usage or configuration error (nothing written), 130
// interrupted.
func exitDecryptCommand() *command {
	return &command{
		name:    "decrypt",
		summary: "decrypt a tree of files through an exit server (resumable)",
		setup: func(c *cmdline) runFunc {
			server := addExitServerFlags(c.FlagSet)
			in := c.String("in", "", "directory `DIR` of encrypted files (read recursively)")
			out := c.String("out", "", "directory `DIR` of clear files (same relative paths; created 0700)")
			jobs := c.Int("jobs", 4, "files decrypted at once")
			var ageTo listFlag
			c.Var(&ageTo, "age-recipient", "write each output as <name>.age, encrypted with age to this recipient `R` (repeatable): no clear file")
			ageFile := c.String("age-recipients-file", "", "age recipients, one per line, from `F` (as --age-recipient)")
			exact := c.Bool("exact-names", false, "--out's volume tells apart names differing only by case or Unicode normalisation (not macOS's default): don't refuse inputs named so")
			c.require("in", "out")
			c.nonEmpty(exitNonEmpty("in", "out", "age-recipient", "age-recipients-file")...)
			return func(ctx context.Context, args []string) int {
				p := c.p
				opts := tree.Options{Jobs: *jobs, ExactNames: *exact}
				if len(ageTo) > 0 || *ageFile != "" {
					recipients, err := outfiles.AgeRecipients(ageTo, *ageFile)
					if err != nil {
						fmt.Fprintf(p.stderr, "idvault exit decrypt: %s\n", printable(err.Error()))
						return exitUsage
					}
					opts.Seal, opts.Suffix = outfiles.AgeWriter(recipients), outfiles.AgeSuffix
				}
				if len(args) > 0 || *jobs < 1 {
					return c.usageError("want --in DIR --out DIR (and --jobs of at least 1), no other argument")
				}
				return p.decryptTree(ctx, server.client(p), *in, *out, opts)
			}
		},
	}
}

// decryptTree runs tree.Decrypt with progress on a terminal, and reports the outcome.
func (p *prog) decryptTree(ctx context.Context, c *exitclient.Client, in, out string, opts tree.Options) int {
	pr := newProgress(p.stderr, "decrypting files", 0)
	opts.Progress = func(done, total int, _ int64) {
		pr.Update("decrypting files", int64(done), int64(total))
	}
	rep, err := tree.Decrypt(ctx, c, in, out, opts)
	summary := fmt.Sprintf("%d files: %d decrypted (%.1f MB), %d already done, %d failed",
		rep.Total, rep.Decrypted, float64(rep.Bytes)/1e6, rep.Skipped, len(rep.Failures))
	if err != nil {
		pr.Fail()
		if rep.Total == 0 {
			summary = "nothing decrypted"
		} else {
			left := rep.Total - rep.Decrypted - rep.Skipped - len(rep.Failures)
			summary = fmt.Sprintf("%s, %d not done; rerun to continue", summary, left)
		}
		return clientStopped(ctx, p, "exit decrypt", err, summary, func() { printDecryptFailures(p, rep) })
	}
	pr.Done(summary)
	if len(rep.Failures) == 0 {
		return exitOK
	}
	printDecryptFailures(p, rep)
	return exitFail
}

// printDecryptFailures lists the failed files on standard output. When that fails (standard
// output redirected to a full disk), standard error says the list is incomplete: the files to
// look at would otherwise be lost without a word.
func printDecryptFailures(p *prog, rep tree.Report) {
	if len(rep.Failures) == 0 {
		return
	}
	bw := bufio.NewWriter(p.stdout)
	fmt.Fprintf(bw, "%d files failed:\n", len(rep.Failures))
	for _, f := range rep.Failures {
		fmt.Fprintf(bw, "  %q\t%s\t%s\n", f.File, printable(f.Code), printable(f.Message))
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(p.stderr, "idvault exit decrypt: the list of the %d failed files is incomplete: %s\n", len(rep.Failures), printable(err.Error()))
	}
}
