package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/providers/structs"
	"github.com/knadh/koanf/v2"
)

// EnvPrefix starts every environment variable idvault reads: IDVAULT_SERVER__LISTEN is the
// key server.listen (sections and keys separated by a double underscore).
const EnvPrefix = "IDVAULT_"

// Sources are the layers above the built-in defaults.
type Sources struct {
	// Embedded is the config.yaml compiled into the binary.
	Embedded []byte
	// File is the --config path ("" for none).
	File string
	// Environ is the process environment (os.Environ()), as KEY=VALUE strings.
	Environ []string
	// Flags are command-line overrides by key (for example "server.listen").
	Flags map[string]any
}

// Loaded is a loaded configuration: the typed Config, the merged key/value view used for
// printing, and the problems found while loading (unknown keys, undecodable values).
type Loaded struct {
	Config   Config
	K        *koanf.Koanf
	Problems []error
}

// Load merges every layer. It fails only when a layer cannot be read at all (a missing file,
// broken YAML); bad values are reported by Validate, all at once.
func Load(src Sources) (*Loaded, error) {
	k := koanf.New(".")
	if err := k.Load(structs.Provider(Default(), "koanf"), nil); err != nil {
		return nil, fmt.Errorf("config: defaults: %w", err)
	}
	known := map[string]bool{}
	for _, key := range k.Keys() {
		known[key] = true
	}
	var problems []error
	check := func(layer string, lk *koanf.Koanf) {
		for _, key := range lk.Keys() {
			if !known[key] && !knownPrefix(known, key) {
				problems = append(problems, fmt.Errorf("%s: unknown key (from %s)", key, layer))
			}
		}
	}
	if len(src.Embedded) > 0 {
		if err := loadLayer(k, "embedded config.yaml", rawbytes.Provider(src.Embedded), check); err != nil {
			return nil, err
		}
	}
	if src.File != "" {
		raw, err := os.ReadFile(src.File)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", src.File, err)
		}
		if err := loadLayer(k, src.File, rawbytes.Provider(raw), check); err != nil {
			return nil, err
		}
	}
	if env := envMap(src.Environ); len(env) > 0 {
		lk := koanf.New(".")
		_ = lk.Load(confmap.Provider(env, "."), nil)
		check("environment", lk)
		if err := k.Merge(lk); err != nil {
			return nil, fmt.Errorf("config: environment: %w", err)
		}
	}
	if len(src.Flags) > 0 {
		if err := k.Load(confmap.Provider(src.Flags, "."), nil); err != nil {
			return nil, fmt.Errorf("config: flags: %w", err)
		}
	}
	l := &Loaded{K: k, Problems: problems}
	l.Config, l.Problems = decode(k, problems)
	return l, nil
}

func loadLayer(k *koanf.Koanf, name string, p *rawbytes.RawBytes, check func(string, *koanf.Koanf)) error {
	lk := koanf.New(".")
	if err := lk.Load(p, yaml.Parser()); err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	check(name, lk)
	if err := k.Merge(lk); err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	return nil
}

// knownPrefix accepts keys below a known list-or-map leaf (none today, kept for safety).
func knownPrefix(known map[string]bool, key string) bool {
	for i := strings.LastIndex(key, "."); i > 0; i = strings.LastIndex(key[:i], ".") {
		if known[key[:i]] {
			return true
		}
	}
	return false
}

// decode unmarshals section by section so that one bad value names its key and does not hide
// problems in other sections.
func decode(k *koanf.Koanf, problems []error) (Config, []error) {
	c := Default()
	conf := koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		TagName:          "koanf",
	}}
	targets := []struct {
		key string
		out any
	}{
		{"server", &c.Server}, {"log", &c.Log}, {"store", &c.Store}, {"admin", &c.Admin},
		{"fakeauth", &c.FakeAuth}, {"identity_server", &c.IdentityServer},
		{"verification", &c.Verification}, {"mail", &c.Mail}, {"apps", &c.Apps},
		{"exit", &c.Exit},
	}
	for _, t := range targets {
		dc := *conf.DecoderConfig
		dc.Result = t.out
		d, err := mapstructure.NewDecoder(&dc)
		if err == nil {
			err = d.Decode(k.Get(t.key))
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %s", t.key, cleanDecodeError(err)))
		}
	}
	return c, problems
}

// cleanDecodeError keeps mapstructure's message (which names the field) but drops values,
// which could be secrets.
func cleanDecodeError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "error(s) decoding:"); i >= 0 {
		msg = strings.TrimSpace(msg[i+len("error(s) decoding:"):])
	}
	msg = strings.ReplaceAll(msg, "\n", "; ")
	// mapstructure quotes the offending value ("cannot parse 'x' as int"): drop the quote.
	for {
		i := strings.Index(msg, "'")
		if i < 0 {
			break
		}
		j := strings.Index(msg[i+1:], "'")
		if j < 0 {
			break
		}
		field := msg[i+1 : i+1+j]
		if strings.Contains(field, ".") || isIdent(field) {
			msg = msg[:i] + "«" + field + "»" + msg[i+2+j:]
			continue
		}
		msg = msg[:i] + "(value hidden)" + msg[i+2+j:]
	}
	return msg
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '[' || r == ']' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// envMap turns IDVAULT_SECTION__KEY=value into {"section.key": value}.
func envMap(environ []string) map[string]any {
	out := map[string]any{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key := strings.ToLower(strings.TrimPrefix(name, EnvPrefix))
		if !strings.Contains(key, "__") {
			continue
		}
		out[strings.ReplaceAll(key, "__", ".")] = value
	}
	return out
}

// Redacted returns the effective configuration as sorted "key = value" lines, with every
// secret replaced by "<redacted>" (or "<empty>" when unset, so an operator sees what is set).
func (l *Loaded) Redacted() []string {
	flat := l.K.All()
	keys := make([]string, 0, len(flat))
	for key := range flat {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var lines []string
	for _, key := range keys {
		v := flat[key]
		switch {
		case key == "apps":
			for i, a := range l.Config.Apps {
				lines = append(lines, fmt.Sprintf("apps[%d] = name=%q test=%t secret=%s auth_token=%s",
					i, a.Name, a.Test, redact(a.Secret), redact(a.AuthToken+a.AuthTokenSHA256)))
			}
			continue
		case isSecretKey(key):
			v = redact(fmt.Sprint(v))
		}
		lines = append(lines, fmt.Sprintf("%s = %v", key, v))
	}
	return lines
}

func isSecretKey(key string) bool {
	if key == "exit.db" { // a connection string may hold a password
		return true
	}
	last := key[strings.LastIndex(key, ".")+1:]
	for _, s := range []string{"token", "password", "secret"} {
		if strings.Contains(last, s) && !strings.HasSuffix(last, "_file") {
			return true
		}
	}
	return false
}

func redact(v string) string {
	if v == "" {
		return "<empty>"
	}
	return "<redacted>"
}

// Err joins the loading problems with the validation problems (nil when all is well).
func (l *Loaded) Err() error {
	return errors.Join(append(append([]error{}, l.Problems...), l.Config.Validate()...)...)
}
