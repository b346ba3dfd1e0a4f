package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Admin is the admin API (/admin/) and the brute-force throttle of its token, which the web
// console's sign-in shares.
type Admin struct {
	// Token authenticates /admin/. When empty, a token is generated on first start into
	// TokenFile (default: admin.token beside the data file).
	Token     string `koanf:"token"`
	TokenFile string `koanf:"token_file"`
	// MaxWrongTokens wrong admin tokens from one client address within WrongTokenWindow lock
	// that address out of the admin API and the console sign-in for LockDuration (even the
	// right token is refused while locked).
	MaxWrongTokens   int           `koanf:"max_wrong_tokens"`
	WrongTokenWindow time.Duration `koanf:"wrong_token_window"`
	LockDuration     time.Duration `koanf:"lock_duration"`
}

// DefaultAdmin holds the built-in admin settings: 10 wrong tokens within 10 minutes lock the
// address for 15 minutes. An operator mistyping a few times is never locked; a guesser gets
// at most 40 tries an hour per address.
func DefaultAdmin() Admin {
	return Admin{MaxWrongTokens: 10, WrongTokenWindow: 10 * time.Minute, LockDuration: 15 * time.Minute}
}

// maxWrongTokens bounds admin.max_wrong_tokens: beyond it the throttle no longer throttles.
const maxWrongTokens = 1000

// CheckBearerToken checks a bearer token idvault is given (admin.token or the content of
// admin.token_file, identity_server.token, exit.token) as a client must send it after
// "Bearer ": at least 16 characters, no control character (a second line), no space at either
// end (the server trims the header, so it would refuse every request). The error never holds
// the token.
func CheckBearerToken(token string) error {
	switch {
	case len(token) < 16:
		return errors.New("must be at least 16 characters")
	case strings.TrimSpace(token) != token:
		return errors.New("must not start or end with a space")
	case strings.ContainsFunc(token, unicode.IsControl):
		return errors.New("must be one line without control characters")
	}
	return nil
}

func (a Admin) validate() []error {
	errs := checkBounds([]bounded{
		{"admin.wrong_token_window", a.WrongTokenWindow, time.Second, maxPeriod},
		{"admin.lock_duration", a.LockDuration, time.Second, maxPeriod},
	})
	if a.Token != "" {
		if err := CheckBearerToken(a.Token); err != nil {
			errs = append(errs, fmt.Errorf("admin.token: %w", err))
		}
	}
	if a.MaxWrongTokens < 1 || a.MaxWrongTokens > maxWrongTokens {
		errs = append(errs, fmt.Errorf("admin.max_wrong_tokens: must be between 1 and %d", maxWrongTokens))
	}
	return errs
}
