package cli

import (
	"cmp"
	"flag"
	"time"

	"github.com/idvault/idvault/app/exitclient"
)

// exitServerFlags are the flags of an exit client command that name the exit server and bound
// its retries: --url, --token and --retry-budget.
type exitServerFlags struct {
	url, token *string
	budget     *time.Duration
}

// addExitServerFlags declares --url, --token and --retry-budget on fs.
func addExitServerFlags(c *flag.FlagSet) exitServerFlags {
	return exitServerFlags{
		url:    c.String("url", "http://127.0.0.1:8000", "base `URL` of the exit server"),
		token:  c.String("token", "", "bearer `TOKEN` of the exit server (or IDVAULT_EXIT__TOKEN)"),
		budget: c.Duration("retry-budget", exitclient.DefaultMaxOutage, "for how long (`DURATION`) the run keeps retrying while no request to the server succeeds, then stops"),
	}
}

// client is the client of the server the flags name, with their retry budget (the caller
// checked it is positive). The token is --token, or IDVAULT_EXIT__TOKEN (so that it stays out
// of the process list and shell history).
func (f exitServerFlags) client(p *prog) *exitclient.Client {
	c := exitclient.New(*f.url, cmp.Or(*f.token, p.getenv("IDVAULT_EXIT__TOKEN")))
	c.Budget = exitclient.NewRetryBudget(*f.budget)
	return c
}
