package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"idvault/app/exitclient"
)

const exitImportUsage = "exit import [--url URL] [--token T] [--batch N] [--parallel N] FILE"

// runExitImport is `idvault exit import`: private identities from FILE (JSON lines or a JSON
// array; gen-dump's identities.jsonl as is) imported in batches.
func runExitImport(ctx context.Context, p *prog, args []string) int {
	fs := p.newFlags("exit import", exitImportUsage)
	url := fs.String("url", "http://127.0.0.1:8000", "base URL of the exit server")
	token := fs.String("token", "", "bearer token of the exit server (or IDVAULT_EXIT__TOKEN)")
	batch := fs.Int("batch", 500, "identities per request (at most the server's exit.batch_limit)")
	parallel := fs.Int("parallel", 2, "batches in flight at once")
	pos, code, ok := p.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(p.stderr, "idvault exit import: want one FILE, got %d arguments\n", len(pos))
		fs.Usage()
		return exitUsage
	}
	if *batch < 1 || *parallel < 1 {
		fmt.Fprintln(p.stderr, "idvault exit import: --batch and --parallel must be at least 1")
		return exitUsage
	}
	f, err := os.Open(pos[0])
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit import: %v\n", err)
		return exitFail
	}
	ids, err := exitclient.ReadIdentities(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit import: %s: %v\n", pos[0], err)
		return exitFail
	}
	c := exitclient.New(*url, tokenOrEnv(p, *token))
	start := time.Now()
	pr := newProgress(p.stderr, "importing identities", int64(len(ids)))
	sum, err := c.Import(ctx, ids, exitclient.ImportOptions{Batch: *batch, Parallel: *parallel, Progress: func(done, total int) {
		pr.Update("importing identities", int64(done), int64(total))
	}})
	if err != nil {
		pr.Fail()
		done := sum.Imported + sum.AlreadyImported + len(sum.Refused)
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(p.stderr, "idvault exit import: interrupted after %d of %d identities (importing again is harmless: those already in count as already imported)\n", done, sum.Total)
		} else {
			fmt.Fprintln(p.stderr, failure("exit import", fmt.Errorf("stopped after %d of %d identities: %w", done, sum.Total, err)))
		}
		return exitFail
	}
	pr.Done(fmt.Sprintf("%d identities: %d imported, %d already imported, %d refused (%.0f/s)",
		sum.Total, sum.Imported, sum.AlreadyImported, len(sum.Refused), float64(sum.Total)/time.Since(start).Seconds()))
	for _, r := range sum.Refused {
		fmt.Fprintf(p.stderr, "  %s:%d: refused: %s\n", pos[0], r.Line, r.Reason)
	}
	if len(sum.Refused) > 0 {
		return exitFail
	}
	return exitOK
}

// tokenOrEnv is the --token flag, or IDVAULT_EXIT__TOKEN (so the token stays out of the
// process list and shell history).
func tokenOrEnv(p *prog, flag string) string {
	if flag != "" {
		return flag
	}
	for _, kv := range p.env.Environ {
		if v, ok := cutEnv(kv, "IDVAULT_EXIT__TOKEN"); ok {
			return v
		}
	}
	return ""
}

func cutEnv(kv, name string) (string, bool) {
	if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
		return kv[len(name)+1:], true
	}
	return "", false
}
