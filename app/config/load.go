package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/providers/structs"
	"github.com/knadh/koanf/v2"

	"github.com/idvault/idvault/app/smallfile"
	"github.com/idvault/idvault/app/userinfo"
)

// EnvPrefix starts every environment variable idvault reads: IDVAULT_SERVER__LISTEN is the
// key server.listen (sections and keys separated by a double underscore).
const EnvPrefix = "IDVAULT_"

// Sources are the layers above the built-in defaults.
type Sources struct {
	// Embedded is the config.yaml compiled into the binary: the local-dev profile, used only
	// when File is empty.
	Embedded []byte
	// File is the --config path ("" for none). When set it replaces the embedded profile: a
	// production file starts from the built-in (production-safe) defaults, never from the
	// local-dev values.
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
	// Profile says which base layer is in force over the built-in defaults: the local-dev
	// profile (no --config), the given file, or the built-in defaults alone.
	Profile string
	// known are the keys the program reads (the others are unknown: reported, never printed).
	known map[string]bool
}

// MaxFileSize bounds a configuration file (4 MiB, room for thousands of declared apps): a
// --config given by mistake to something huge or endless fails at once.
const MaxFileSize = 4 << 20

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
	profile := "built-in defaults only (no --config, no embedded profile)"
	if src.File == "" && len(src.Embedded) > 0 {
		profile = "local-dev (the embedded config.yaml; no --config given)"
		if err := loadLayer(k, "embedded config.yaml", rawbytes.Provider(src.Embedded), check); err != nil {
			return nil, err
		}
	}
	if src.File != "" {
		profile = "file " + src.File + " over the built-in defaults (the embedded dev profile is not used)"
		raw, err := smallfile.Read(src.File, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err) // names the file: read FILE, open FILE
		}
		if err := loadLayer(k, src.File, rawbytes.Provider(raw), check); err != nil {
			return nil, err
		}
		problems = append(problems, lostYAMLValues(src.File, raw)...)
	}
	env, envProblems := envMap(src.Environ)
	problems = append(problems, envProblems...)
	if len(env) > 0 {
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
	problems = append(problems, singleUnderscoreEnv(src.Environ, known)...)
	l := &Loaded{K: k, Problems: problems, Profile: profile, known: known}
	l.Config, l.Problems = decode(k, problems)
	derivePaths(k, &l.Config)
	return l, nil
}

func loadLayer(k *koanf.Koanf, name string, p *rawbytes.RawBytes, check func(string, *koanf.Koanf)) error {
	lk := koanf.New(".")
	if err := lk.Load(p, yaml.Parser()); err != nil {
		raw, _ := p.ReadBytes()
		return fmt.Errorf("config: %s: %s", name, yamlError(raw, err))
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

// decode unmarshals section by section. Values of the wrong type are reported per key by
// checkTypes (full key and expected type); a section whose decoding fails for another reason
// (a section that is not a mapping) is reported by name. Values never appear in problems.
func decode(k *koanf.Koanf, problems []error) (Config, []error) {
	c := Default()
	typeProblems := checkTypes(k)
	problems = append(problems, typeProblems...)
	targets := []struct {
		key string
		out any
	}{
		{"server", &c.Server}, {"log", &c.Log}, {"store", &c.Store}, {"admin", &c.Admin}, {"console", &c.Console}, {"metrics", &c.Metrics},
		{"fakeauth", &c.FakeAuth}, {"identity_server", &c.IdentityServer},
		{"verification", &c.Verification}, {"mail", &c.Mail}, {"apps", &c.Apps},
		{"exit", &c.Exit},
	}
	for _, t := range targets {
		if err := decodeValue(k.Get(t.key), t.out); err != nil && !mentions(typeProblems, t.key) {
			want := "a mapping of keys"
			if t.key == "apps" {
				want = "a list of apps"
			}
			problems = append(problems, fmt.Errorf("%s: want %s", t.key, want))
		}
	}
	return c, problems
}

// decodeValue decodes one raw value into out as the loader does (weakly typed: "8080" is an
// int, "10s" a duration, "a,b" a list).
func decodeValue(raw, out any) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		TagName:          "koanf",
		Result:           out,
	})
	if err != nil {
		return err
	}
	return d.Decode(raw)
}

func mentions(problems []error, section string) bool {
	for _, p := range problems {
		if strings.HasPrefix(p.Error(), section+".") || strings.HasPrefix(p.Error(), section+"[") {
			return true
		}
	}
	return false
}

// envMap turns IDVAULT_SECTION__KEY=value into {"section.key": value}. Declared apps are a
// list of records, which the environment cannot spell: IDVAULT_APPS and IDVAULT_APPS__... are
// reported and left out (merged, IDVAULT_APPS__0__NAME=x made an app whose name was empty).
func envMap(environ []string) (map[string]any, []error) {
	out := map[string]any{}
	var problems []error
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key := strings.ToLower(strings.TrimPrefix(name, EnvPrefix))
		if key == "apps" || strings.HasPrefix(key, "apps__") {
			problems = append(problems, fmt.Errorf("apps: environment variable %s is not read: declare apps in the --config file", name))
			continue
		}
		if !strings.Contains(key, "__") {
			continue
		}
		out[strings.ReplaceAll(key, "__", ".")] = value
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].Error() < problems[j].Error() })
	return out, problems
}

// singleUnderscoreEnv reports IDVAULT_ variables that would name a known key with a double
// underscore but use single ones (IDVAULT_FAKEAUTH_ENABLED): they are not read, silently, which
// is worse than an error.
func singleUnderscoreEnv(environ []string, known map[string]bool) []error {
	flat := map[string]string{}
	for key := range known {
		if strings.Contains(key, ".") { // a key outside any section (apps) is envMap's
			flat[strings.ReplaceAll(key, ".", "_")] = key
		}
	}
	var problems []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, EnvPrefix)
		if !ok || strings.Contains(rest, "__") {
			continue
		}
		if key, ok := flat[strings.ToLower(rest)]; ok {
			problems = append(problems, fmt.Errorf("%s: environment variable %s is not read: write %s%s (a double underscore between section and key)",
				key, name, EnvPrefix, strings.ToUpper(strings.Replace(key, ".", "__", 1))))
		}
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].Error() < problems[j].Error() })
	return problems
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
		case !l.known[key] && !knownPrefix(l.known, key):
			v = "<unknown key: value not shown>"
		case isSecretKey(key):
			v = redact(fmt.Sprint(v))
		default:
			v = redactURLs(v)
		}
		if d, ok := v.(time.Duration); ok { // a built-in default: written as a file would say it
			v = short(d)
		}
		lines = append(lines, fmt.Sprintf("%s = %v", key, v))
	}
	return lines
}

// isSecretKey reports whether a key's value must not be printed: its last part, or the last
// part of a key it sits under, names a password, token, secret or key (but not a file holding
// one, such as store.key_file). A mapping written where a secret string belongs (admin.token:
// {a: ...}, or IDVAULT_MAIL__PASSWORD__X) flattens to keys under the secret's, and those are
// secret too.
func isSecretKey(key string) bool {
	for k := key; ; {
		if isSecretName(k) {
			return true
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			return false
		}
		k = k[:i]
	}
}

// isSecretName reports whether key itself, by its last part, names a secret.
func isSecretName(key string) bool {
	switch key {
	case "exit.db": // a connection string may hold a password
		return true
	case "exit.key_cache", // a count of cached keys, not a key
		"admin.max_wrong_tokens", "admin.wrong_token_window": // the throttle of wrong tokens, not a token
		return false
	}
	last := strings.ToLower(key[strings.LastIndex(key, ".")+1:])
	for _, s := range []string{"token", "password", "passwd", "pwd", "secret", "key", "credential"} {
		if strings.Contains(last, s) && !strings.HasSuffix(last, "_file") {
			return true
		}
	}
	return false
}

// redactURLs hides the user name and password of a URL in a value (a string or a list of
// them), such as the credentials of an issuer written http://user:password@host.
func redactURLs(v any) any {
	switch v := v.(type) {
	case string:
		return userinfo.Redact(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactURLs(e)
		}
		return out
	}
	return v
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
