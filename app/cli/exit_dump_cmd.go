package cli

import (
	"context"
	"fmt"
)

func runGenDump(_ context.Context, p *prog, _ []string) int {
	fmt.Fprintln(p.stderr, "idvault exit gen-dump: not implemented yet")
	return exitFail
}

func runLoadDump(_ context.Context, p *prog, _ []string) int {
	fmt.Fprintln(p.stderr, "idvault exit load-dump: not implemented yet")
	return exitFail
}
