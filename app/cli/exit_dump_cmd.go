package cli

import (
	"context"
	"fmt"
)

func runGenDump(_ context.Context, p *prog, args []string) int {
	if _, code, ok := p.parse(p.newFlags("exit gen-dump", "exit gen-dump"), args); !ok {
		return code
	}
	fmt.Fprintln(p.stderr, "idvault exit gen-dump: not implemented yet")
	return exitFail
}

func runLoadDump(_ context.Context, p *prog, args []string) int {
	if _, code, ok := p.parse(p.newFlags("exit load-dump", "exit load-dump DIR"), args); !ok {
		return code
	}
	fmt.Fprintln(p.stderr, "idvault exit load-dump: not implemented yet")
	return exitFail
}
