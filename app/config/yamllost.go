package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lostYAMLValues reports the values of a config file that YAML reads as something other than
// what was written, so that the value is lost without a syntax error: a plain value starting
// with "!" is a tag (`password: !Pa55word` is an empty string tagged "!Pa55word";
// `password: !Pa55 word` is "word"), and one starting with "&" names an anchor
// (`token: &xyz` is empty). Passwords and tokens are where such values come from, and an empty
// secret otherwise passes silently (an admin token falls back to its file). Each problem names
// the key and the character, never the value. The YAML core schema's own tags (`!!str`) and
// anchors on values that are there (`&defaults {…}`) are kept.
func lostYAMLValues(layer string, raw []byte) []error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil // syntax errors are reported by the loader, with their line
	}
	var problems []error
	var walk func(path string, n *yaml.Node)
	walk = func(path string, n *yaml.Node) {
		switch {
		case n.Style&yaml.TaggedStyle != 0 && !strings.HasPrefix(n.Tag, "!!"):
			problems = append(problems, fmt.Errorf("%s: line %d: the value starts with \"!\", which YAML reads as a tag and drops (from %s): write the value in quotes", orRoot(path), n.Line, layer))
		case n.Anchor != "" && n.Kind == yaml.ScalarNode && n.Value == "":
			problems = append(problems, fmt.Errorf("%s: line %d: the value starts with \"&\", which YAML reads as an anchor name, leaving the value empty (from %s): write the value in quotes", orRoot(path), n.Line, layer))
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(path, c)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(join(path, n.Content[i].Value), n.Content[i+1])
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(join(path, strconv.Itoa(i)), c)
			}
		}
	}
	walk("", &doc)
	return problems
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(the file)"
	}
	return path
}
