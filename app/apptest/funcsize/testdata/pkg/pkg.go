package pkg

import "context"

type cmd struct{}

func (c *cmd) setup() func(ctx context.Context, args []string) int {
	return func(ctx context.Context, args []string) int {
		_ = ctx
		return len(args)
	}
}

func short(a, b int) (int, error) { return a + b, nil }
