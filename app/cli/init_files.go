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
	return fmt.Sprintf(`# idvault production configuration, written by "idvault init". It replaces the embedded
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
`, p.config, q(p.listen), q(filepath.Join(p.data, "idvault.db")), q(p.key), q(p.token), p.identity)
}

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
	esc := func(s string) string { return strings.ReplaceAll(s, "%", "%%") }
	arg := func(s string) string {
		s = esc(s)
		if strings.ContainsAny(s, " \t") {
			return `"` + s + `"`
		}
		return s
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("# Written by \"idvault init\". Install: install -m 0644 %s /etc/systemd/system/", esc(p.unit))
	w("[Unit]")
	w("Description=idvault (identities and verification codes for end-to-end encrypted apps)")
	w("After=network-online.target")
	w("Wants=network-online.target")
	w("")
	w("[Service]")
	w("Type=exec")
	w("ExecStart=%s serve --config %s", arg(p.bin), arg(p.config))
	w("Restart=on-failure")
	w("# A stray kill -HUP stops idvault cleanly, then it ends by SIGHUP: restart it then too.")
	w("RestartForceExitStatus=SIGHUP")
	w("RestartSec=2s")
	w("# The key and the token stay 0600 in %s; the service reads its own copies.", esc(p.dir))
	w("LoadCredential=master.key:%s", esc(p.key))
	w("LoadCredential=admin.token:%s", esc(p.token))
	w("Environment=IDVAULT_STORE__KEY_FILE=%%d/master.key")
	w("Environment=IDVAULT_ADMIN__TOKEN_FILE=%%d/admin.token")
	w("# Written by \"idvault app create --identity-server-env\" (absent until then).")
	w("EnvironmentFile=-%s", esc(p.identity))
	if rel, ok := p.stateDirectory(); ok {
		w("DynamicUser=yes")
		w("StateDirectory=%s", esc(rel))
		w("StateDirectoryMode=0700")
	} else {
		w("User=%s", p.unitUser())
		w("ReadWritePaths=%s", arg(p.data))
	}
	w("UMask=0077")
	w("NoNewPrivileges=yes")
	w("ProtectSystem=strict")
	switch {
	case p.under("/home", "/root", "/run/user"):
		w("ProtectHome=read-only")
	default:
		w("ProtectHome=yes")
	}
	if !p.under("/tmp", "/var/tmp") {
		w("PrivateTmp=yes")
	}
	w("PrivateDevices=yes")
	w("ProtectKernelTunables=yes")
	w("ProtectKernelModules=yes")
	w("ProtectKernelLogs=yes")
	w("ProtectControlGroups=yes")
	w("ProtectClock=yes")
	w("ProtectHostname=yes")
	w("ProtectProc=invisible")
	w("RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX")
	w("RestrictNamespaces=yes")
	w("RestrictRealtime=yes")
	w("RestrictSUIDSGID=yes")
	w("LockPersonality=yes")
	w("MemoryDenyWriteExecute=yes")
	w("RemoveIPC=yes")
	w("CapabilityBoundingSet=")
	w("AmbientCapabilities=")
	w("SystemCallArchitectures=native")
	w("SystemCallFilter=@system-service")
	w("SystemCallFilter=~@privileged @resources")
	w("")
	w("[Install]")
	w("WantedBy=multi-user.target")
	return b.String()
}
