package config

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/knadh/koanf/parsers/yaml"
)

var yamlLine = regexp.MustCompile(`line \d+: `)

// yamlQuoted matches what the YAML library quotes from the file in its errors: a value
// (cannot decode !!str `...` as a !!int), an anchor name (unknown anchor '...' referenced) or
// a key (invalid map key: ...). A single quoted character is the library's own (could not
// find expected ':'; did not find expected ',' or ']'): it is matched first and kept, so that
// the text between two of them (' or ') is not taken for a value.
var yamlQuoted = regexp.MustCompile("`[^`]*`|'[^']'|'[^']{2,}'|(invalid map key): .*")

// hideYAMLValues removes from a YAML error what it quotes from the file: the value may be a
// secret (a password written "*Pa55word" is read as an alias to an anchor of that name, and
// the error named it). What is wrong and the line stay.
func hideYAMLValues(msg string) string {
	return yamlQuoted.ReplaceAllStringFunc(msg, func(m string) string {
		if sub := yamlQuoted.FindStringSubmatch(m); sub[1] != "" {
			return sub[1] + " (not shown)"
		}
		if len(m) == 3 && m[0] == '\'' {
			return m
		}
		return "(a value, not shown)"
	})
}

// yamlError restates a YAML syntax error with the line where the file stops being valid YAML.
// The YAML library reports some errors at the start of the enclosing block (counted from 0)
// rather than where the problem is; the line reported here is the first line such that no
// prefix of the file reaching it parses.
func yamlError(raw []byte, err error) string {
	msg := hideYAMLValues(err.Error())
	line := firstBadLine(raw)
	if line == 0 {
		return msg
	}
	where := fmt.Sprintf("line %d: ", line)
	if yamlLine.MatchString(msg) {
		return yamlLine.ReplaceAllLiteralString(msg, where)
	}
	return "yaml: " + where + bytes.NewBufferString(msg).String()
}

// firstBadLine returns the smallest n such that the first n lines and every longer prefix fail
// to parse (0 if the whole file parses).
func firstBadLine(raw []byte) int {
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > 5000 {
		return 0
	}
	p := yaml.Parser()
	bad := 0
	for n := len(lines); n >= 1; n-- {
		if _, err := p.Unmarshal(bytes.Join(lines[:n], nil)); err == nil {
			break
		}
		bad = n
	}
	return bad
}
