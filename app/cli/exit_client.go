package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/records"
)

// exitInterrupted is the exit code of a bulk client stopped by Ctrl-C (128 + SIGINT, as shells
// report it).
const exitInterrupted = 130

// clientStopped reports the error that ended a bulk client (exit decrypt, import,
// decrypt-records, audit) and returns its exit code. A configuration or usage error, found
// before any work, is one line on stderr and exit 2. Otherwise the run had started (or may
// have): details, when set, prints what it did, then one line says why it stopped and what it
// did (summary): 130 for Ctrl-C (no Go error text), 1 otherwise.
func clientStopped(ctx context.Context, p *prog, name string, err error, summary string, details func()) int {
	var cfg *exitclient.ConfigError
	if errors.As(err, &cfg) {
		fmt.Fprintf(p.stderr, "idvault %s: %s\n", name, printable(cfg.Error()))
		return exitUsage
	}
	if errors.As(err, new(*records.UsageError)) {
		fmt.Fprintf(p.stderr, "idvault %s: %s\n", name, printable(err.Error()))
		return exitUsage
	}
	if details != nil {
		details()
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintf(p.stderr, "idvault %s: interrupted: %s\n", name, summary)
		return exitInterrupted
	}
	fmt.Fprintf(p.stderr, "idvault %s: stopped: %s; %s\n", name, printable(err.Error()), summary)
	return exitFail
}

// printable is s with control characters and anything unprintable escaped as strconv.Quote
// does (without the quotes), so that a name or message never reaches the terminal raw.
func printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[0])
		case strconv.IsPrint(r):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}
