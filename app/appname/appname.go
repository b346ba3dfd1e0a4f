// Package appname holds the rule for app names in one place: the app registry (app/apps,
// apps created at runtime) and the configuration (app/config, apps declared in the config
// file, which may not import app/apps) both apply it. Standard library only (.ci/depcheck).
package appname

import (
	"unicode"
	"unicode/utf8"
)

// MaxChars is the longest app name, in characters (not bytes).
const MaxChars = 100

// Rule is the rule as error messages state it, after the word "name" or the config key.
const Rule = "must be 1 to 100 printable characters"

// Valid reports whether name is 1 to MaxChars printable characters (unicode.IsPrint:
// letters, marks, numbers, punctuation, symbols and the ASCII space) of valid UTF-8. A name is
// what tells apps apart in lists, in the console and on a terminal, so a name may not hold
// what prints as nothing or moves the text around: C0 and C1 controls (U+009B is a terminal's
// CSI, which `idvault app list` would send to it), format characters (U+200B zero-width space:
// "Sh<U+200B>op" beside "Shop"; U+202E right-to-left override) or line and paragraph
// separators. The one space is the ASCII space: another (U+00A0, U+3000) would make two names
// look alike.
func Valid(name string) bool {
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxChars {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
