package cli

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// configYAML is the production config `idvault init` writes: only what differs from the
// built-in defaults (which are production-safe) or what a reader needs to see; `idvault config
// check --config FILE` prints the rest.
func (p *initFiles) configYAML() string {
	q := strconv.Quote
	return fmt.Sprintf(initConfigFormat, p.config, q(p.listen), q(filepath.Join(p.data, "idvault.db")), q(p.key), q(p.token), p.identity)
}

// initConfigFormat is config.yaml for configYAML's Sprintf: %[1]s the config file, %[2]s the
// listen address, %[3]s the data file, %[4]s the master key, %[5]s the admin token (those four
// quoted) and %[6]s the identity server's environment file.
const initConfigFormat = `# idvault production configuration, written by "idvault init". It replaces the embedded
# local-dev profile: every key left out takes its built-in default (fake authentication off,
# mail over mandatory STARTTLS). "idvault config check --config %[1]s" prints them all.

server:
  # Loopback: publish it through a TLS reverse proxy (set trusted_proxies to the proxy's
  # address and allowed_hosts to the public host name).
  listen: %[2]s
  trusted_proxies: []
  allowed_hosts: []

log:
  level: info
  format: json

store:
  path: %[3]s
  # 0600; idvault.service reads it as a systemd credential.
  key_file: %[4]s
  # Memory (MiB) for the cache of identity records, which holds private identities in process
  # memory (never on disk); 0 turns it off.
  record_cache_mib: 32

admin:
  # 0600; the admin API and the console take it as a bearer token. idvault.service reads it as a
  # systemd credential.
  token_file: %[5]s
  max_wrong_tokens: 10
  wrong_token_window: 10m
  lock_duration: 15m

console:
  # auto: on when server.listen is a loopback address.
  enabled: auto

metrics:
  # Prometheus metrics at /metrics on server.listen; or set listen to serve them on an address
  # of their own (the reverse proxy then need not hide them).
  enabled: true
  listen: ""

fakeauth:
  # Never in production: it hands out private identities without authentication.
  enabled: false

identity_server:
  # Enabled for one app, with a bearer token, by
  #   idvault app create --config %[1]s --name NAME --identity-server-env %[6]s
  # then "systemctl restart idvault" (idvault.service reads that file).
  enabled: false

verification:
  # Set the mail section to your SMTP server, then enable it.
  enabled: false

mail:
  host: smtp.example.com
  port: 587
  # mandatory (STARTTLS), ssl (implicit TLS, port 465), opportunistic or none.
  tls: mandatory
  # A private CA's certificate (PEM), added to the system's roots:
  # ca_file: /etc/idvault/smtp-ca.pem
  username: ""
  # Prefer IDVAULT_MAIL__PASSWORD in %[6]s or another EnvironmentFile.
  password: ""
  from: no-reply@example.com
  from_name: idvault
`

// unitUser is the user the unit runs as when --data is outside /var/lib ("" inside it: a
// dynamic user with a systemd-managed state directory).
func (p *initFiles) unitUser() string {
	if _, ok := p.stateDirectory(); ok {
		return ""
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}

// stateDirectory is --data relative to /var/lib, when it is under it.
func (p *initFiles) stateDirectory() (string, bool) {
	rel, ok := strings.CutPrefix(p.data, "/var/lib/")
	return rel, ok && rel != "" && !strings.Contains("/"+rel+"/", "/../")
}

// under says whether any of the unit's paths lies under one of the roots.
func (p *initFiles) under(roots ...string) bool {
	for _, path := range []string{p.dir, p.data, p.bin} {
		for _, r := range roots {
			if path == r || strings.HasPrefix(path, r+"/") {
				return true
			}
		}
	}
	return false
}

// systemdUnit is idvault.service: the server sandboxed so that it writes only --data and reads
// its master key and admin token as credentials (copied by systemd, before the sandbox
// applies, into a directory only the service can read), so the files in --dir stay root's.
func (p *initFiles) systemdUnit() string {
	var u unitText
	u.line("# Written by \"idvault init\". Install: install -m 0644 %s /etc/systemd/system/", unitEscape(p.unit))
	u.line("[Unit]")
	u.line("Description=idvault (identities and verification codes for end-to-end encrypted apps)")
	u.line("After=network-online.target")
	u.line("Wants=network-online.target")
	u.line("")
	u.line("[Service]")
	u.line("Type=exec")
	u.line("ExecStart=%s serve --config %s", unitArg(p.bin), unitArg(p.config))
	u.line("Restart=on-failure")
	u.line("# A stray kill -HUP stops idvault cleanly, then it ends by SIGHUP: restart it then too.")
	u.line("RestartForceExitStatus=SIGHUP")
	u.line("RestartSec=2s")
	u.line("# The key and the token stay 0600 in %s; the service reads its own copies.", unitEscape(p.dir))
	u.line("LoadCredential=master.key:%s", unitEscape(p.key))
	u.line("LoadCredential=admin.token:%s", unitEscape(p.token))
	u.line("Environment=IDVAULT_STORE__KEY_FILE=%%d/master.key")
	u.line("Environment=IDVAULT_ADMIN__TOKEN_FILE=%%d/admin.token")
	u.line("# Written by \"idvault app create --identity-server-env\" (absent until then).")
	u.line("EnvironmentFile=-%s", unitEscape(p.identity))
	p.unitSandbox(&u)
	u.line("")
	u.line("[Install]")
	u.line("WantedBy=multi-user.target")
	return u.String()
}

// unitSandbox writes the [Service] lines of idvault.service that say who the service runs as,
// where it may write, and what else it is denied.
func (p *initFiles) unitSandbox(u *unitText) {
	if rel, ok := p.stateDirectory(); ok {
		u.line("DynamicUser=yes")
		u.line("StateDirectory=%s", unitEscape(rel))
		u.line("StateDirectoryMode=0700")
	} else {
		u.line("User=%s", p.unitUser())
		u.line("ReadWritePaths=%s", unitArg(p.data))
	}
	u.line("UMask=0077")
	u.line("NoNewPrivileges=yes")
	u.line("ProtectSystem=strict")
	switch {
	case p.under("/home", "/root", "/run/user"):
		u.line("ProtectHome=read-only")
	default:
		u.line("ProtectHome=yes")
	}
	if !p.under("/tmp", "/var/tmp") {
		u.line("PrivateTmp=yes")
	}
	u.line("PrivateDevices=yes")
	u.line("ProtectKernelTunables=yes")
	u.line("ProtectKernelModules=yes")
	u.line("ProtectKernelLogs=yes")
	u.line("ProtectControlGroups=yes")
	u.line("ProtectClock=yes")
	u.line("ProtectHostname=yes")
	u.line("ProtectProc=invisible")
	u.line("RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX")
	u.line("RestrictNamespaces=yes")
	u.line("RestrictRealtime=yes")
	u.line("RestrictSUIDSGID=yes")
	u.line("LockPersonality=yes")
	u.line("MemoryDenyWriteExecute=yes")
	u.line("RemoveIPC=yes")
	u.line("CapabilityBoundingSet=")
	u.line("AmbientCapabilities=")
	u.line("SystemCallArchitectures=native")
	u.line("SystemCallFilter=@system-service")
	u.line("SystemCallFilter=~@privileged @resources")
}

// unitText is a systemd unit being written, line by line.
type unitText struct{ strings.Builder }

// line writes one line of the unit: format with a, then a newline.
func (u *unitText) line(format string, a ...any) { fmt.Fprintf(&u.Builder, format+"\n", a...) }

// unitEscape doubles the % of s, which systemd would otherwise take for a specifier.
func unitEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// unitArg is s as one argument of a systemd command line: escaped (unitEscape), and quoted
// when it holds a space or a tab.
func unitArg(s string) string {
	s = unitEscape(s)
	if strings.ContainsAny(s, " \t") {
		return `"` + s + `"`
	}
	return s
}
