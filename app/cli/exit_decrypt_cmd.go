package cli

import (
	"context"
	"fmt"

	"idvault/app/exitclient"
)

const exitDecryptUsage = "exit decrypt [--url URL] [--token T] --in DIR --out DIR [--jobs N]"

// runExitDecrypt is `idvault exit decrypt`: a tree of ciphertexts mirrored into clear files,
// resumable, with a report of every failure and a non-zero exit if there was one.
func runExitDecrypt(ctx context.Context, p *prog, args []string) int {
	fs := p.newFlags("exit decrypt", exitDecryptUsage)
	url := fs.String("url", "http://127.0.0.1:8000", "base URL of the exit server")
	token := fs.String("token", "", "bearer token of the exit server (or IDVAULT_EXIT__TOKEN)")
	in := fs.String("in", "", "directory of encrypted files (read recursively)")
	out := fs.String("out", "", "directory of clear files (same relative paths; created)")
	jobs := fs.Int("jobs", 4, "files decrypted at once")
	pos, code, ok := p.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 || *in == "" || *out == "" || *jobs < 1 {
		fmt.Fprintln(p.stderr, "idvault exit decrypt: want --in DIR --out DIR (and --jobs of at least 1), no other argument")
		fs.Usage()
		return exitUsage
	}
	c := exitclient.New(*url, tokenOrEnv(p, *token))
	pr := newProgress(p.stderr, "decrypting files", 0)
	rep, err := c.DecryptTree(ctx, *in, *out, exitclient.DecryptOptions{Jobs: *jobs, Progress: func(done, total int, _ int64) {
		pr.Update("decrypting files", int64(done), int64(total))
	}})
	if err != nil {
		pr.Fail()
		fmt.Fprintln(p.stderr, failure("exit decrypt", err))
		return exitFail
	}
	pr.Done(fmt.Sprintf("%d files: %d decrypted (%.1f MB), %d already done, %d failed",
		rep.Total, rep.Decrypted, float64(rep.Bytes)/1e6, rep.Skipped, len(rep.Failures)))
	if len(rep.Failures) == 0 {
		return exitOK
	}
	fmt.Fprintf(p.stdout, "%d files failed:\n", len(rep.Failures))
	for _, f := range rep.Failures {
		fmt.Fprintf(p.stdout, "  %s\t%s\t%s\n", f.File, f.Code, f.Message)
	}
	return exitFail
}
