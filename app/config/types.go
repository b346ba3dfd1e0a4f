package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/knadh/koanf/v2"
)

// leaves maps every leaf key below prefix (koanf tags, "." between levels) to its Go type.
func leaves(t reflect.Type, prefix string, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("koanf")
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			leaves(f.Type, key, out)
			continue
		}
		out[key] = f.Type
	}
}

// want describes a Go type as a config value, for "want ..." problems.
func want(t reflect.Type) string {
	if t == reflect.TypeOf(time.Duration(0)) {
		return "a duration such as 10s, 15m or 1h30m"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(want(t.Elem()), "a "), "an ") + "s (comma-separated in the environment)"
	}
	return t.String()
}

// checkTypes decodes every set leaf alone and reports each value of the wrong type by its full
// key and the expected type (never the value, which may be a secret), then checks apps[]
// entries: each must be a mapping of known keys with values of the right type.
func checkTypes(k *koanf.Koanf) []error {
	types := map[string]reflect.Type{}
	leaves(reflect.TypeOf(Config{}), "", types)
	delete(types, "apps")
	keys := make([]string, 0, len(types))
	for key := range types {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var problems []error
	for _, key := range keys {
		raw := k.Get(key)
		if raw == nil {
			continue
		}
		if _, isMap := raw.(map[string]any); isMap || decodeValue(raw, reflect.New(types[key]).Interface()) != nil {
			problems = append(problems, fmt.Errorf("%s: want %s", key, want(types[key])))
		}
	}
	return append(problems, checkApps(k.Get("apps"))...)
}

// checkApps checks the entries of the apps list (koanf does not flatten lists, so the unknown
// key check of the layers does not see inside them).
func checkApps(raw any) []error {
	if raw == nil {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		if s, isString := raw.(string); isString && s == "" {
			return nil
		}
		return []error{fmt.Errorf("apps: want a list of apps")}
	}
	fields := map[string]reflect.Type{}
	leaves(reflect.TypeOf(DeclaredApp{}), "", fields)
	var problems []error
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Errorf("apps[%d]: want a mapping (name, secret, auth_token...)", i))
			continue
		}
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			t, known := fields[name]
			switch {
			case !known:
				problems = append(problems, fmt.Errorf("apps[%d].%s: unknown key", i, name))
			case decodeValue(m[name], reflect.New(t).Interface()) != nil:
				problems = append(problems, fmt.Errorf("apps[%d].%s: want %s", i, name, want(t)))
			}
		}
	}
	return problems
}
