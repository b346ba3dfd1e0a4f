package fakeauth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/directory"
)

// shownEmailMax bounds how much of a rejected email an error message repeats.
const shownEmailMax = 80

// badEmail is invalid_email for the email at position i of a list (i < 0: the single email of
// the email parameter). The message repeats the offending text (an email is not a secret),
// quoted and truncated.
func badEmail(i int, email string) *apierr.Error {
	shown := email
	if len(shown) > shownEmailMax {
		shown = shown[:shownEmailMax] + "..."
	}
	hint := ""
	if strings.Contains(email, " ") {
		hint = " (in a query string '+' means a space: send a '+' as %2B)"
	}
	if i < 0 {
		return apierr.InvalidEmail.Msg("%q is not a valid email address%s", shown, hint)
	}
	return apierr.InvalidEmail.Msg("email #%d of the list (%q) is not a valid email address%s", i+1, shown, hint)
}

// dirError maps a directory error to the client's error.
func dirError(op string, err error) error {
	if errors.Is(err, directory.ErrUnknownUser) {
		return apierr.UserNotFound.Msg("no private identity was ever handed out for that email")
	}
	return apierr.Internal(fmt.Errorf("fakeauth: %s: %w", op, err))
}
