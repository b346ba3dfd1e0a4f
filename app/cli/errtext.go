package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// failure is the line a command prints for err: "idvault <path>: <err>", without the
// operation the error text opens with when the command's name already says it ("idvault exit
// decrypt: decrypt: list DIR" reads "idvault exit decrypt: list DIR"; "load dump:" under
// load-dump likewise). An error that ends in the command's context being cancelled (Ctrl-C,
// SIGTERM) is said as "interrupted", not with Go's "context canceled".
func failure(path string, err error) string {
	if errors.Is(err, context.Canceled) {
		return progPath(path) + ": interrupted"
	}
	words := strings.Fields(path)
	msg := err.Error()
	if len(words) > 0 {
		last := words[len(words)-1]
		for _, op := range []string{last, strings.ReplaceAll(last, "-", " ")} {
			if rest, ok := strings.CutPrefix(msg, op+": "); ok {
				msg = rest
				break
			}
		}
	}
	return fmt.Sprintf("%s: %s", progPath(path), msg)
}
