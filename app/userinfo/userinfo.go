// Package userinfo hides the user name and password a URL may carry (user:password@), so that
// the URL can be printed: standard library only, so that any package may use it.
package userinfo

import "strings"

// Redact returns s with the user information of a URL in it (user:password@ after
// "scheme://") replaced by "<redacted>@", so that a URL holding credentials can be printed in
// an error or in config check. A string without "://" and "@" is returned as it is.
func Redact(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	return s[:i+3] + "<redacted>@" + rest[at+1:]
}
