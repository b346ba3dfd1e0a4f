package cli

import (
	"cmp"
	"errors"
	"flag"
	"time"

	"github.com/idvault/idvault/app/exitclient"
)

// exitServerFlags are the flags of an exit client command that name the exit server and bound
// its retries: --url, --token and --retry-budget.
type exitServerFlags struct {
	url, token *string
	budget     *retryBudgetFlag
}

// exitNonEmpty is more with the flags of addExitServerFlags that may not be given an empty
// value (nonEmpty): --token "" would fall back to IDVAULT_EXIT__TOKEN, --url "" names no server.
func exitNonEmpty(more ...string) []string { return append([]string{"url", "token"}, more...) }

// addExitServerFlags declares --url, --token and --retry-budget on fs.
func addExitServerFlags(c *flag.FlagSet) exitServerFlags {
	budget := new(retryBudgetFlag(exitclient.DefaultMaxOutage))
	c.Var(budget, "retry-budget", "for how long (`DURATION`) the run keeps retrying while no request to the server succeeds, then stops")
	return exitServerFlags{
		url:    c.String("url", "http://127.0.0.1:8000", "base `URL` of the exit server"),
		token:  c.String("token", "", "bearer `TOKEN` of the exit server (or IDVAULT_EXIT__TOKEN)"),
		budget: budget,
	}
}

// retryBudgetFlag is --retry-budget: a duration that Set refuses unless positive, so every exit
// client command rejects a bad budget while its flags are parsed, with the one usage message
// `invalid value "0s" for flag --retry-budget: must be a positive duration`.
type retryBudgetFlag time.Duration

func (b *retryBudgetFlag) String() string { return time.Duration(*b).String() }

func (b *retryBudgetFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration (such as 90s or 5m)")
	}
	if d <= 0 {
		return errors.New("must be a positive duration")
	}
	*b = retryBudgetFlag(d)
	return nil
}

// client is the client of the server the flags name, with their retry budget (positive: the
// flag refuses any other). The token is --token, or IDVAULT_EXIT__TOKEN (so that it stays out
// of the process list and shell history).
func (f exitServerFlags) client(p *prog) *exitclient.Client {
	c := exitclient.New(*f.url, cmp.Or(*f.token, p.getenv("IDVAULT_EXIT__TOKEN")))
	c.Budget = exitclient.NewRetryBudget(time.Duration(*f.budget))
	return c
}
