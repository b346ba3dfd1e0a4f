package config

import (
	"fmt"
	"net"
	"strings"

	"github.com/idvault/idvault/app/loopback"
)

// Console is the web console at /console/ (app management with the admin token).
type Console struct {
	// Enabled is "auto" (the default: on when server.listen is a loopback address, off
	// otherwise), "true" or "false". YAML booleans are accepted.
	Enabled string `koanf:"enabled"`
}

// On reports whether the console is served for this listen address.
func (c Console) On(listen string) bool {
	switch strings.ToLower(strings.TrimSpace(c.Enabled)) {
	case "true", "1", "yes", "on":
		return true
	case "false", "0", "no", "off":
		return false
	}
	host, _, err := net.SplitHostPort(listen)
	return err == nil && loopback.IsHost(host)
}

func (c Console) validate() []error {
	switch strings.ToLower(strings.TrimSpace(c.Enabled)) {
	case "auto", "", "true", "1", "yes", "on", "false", "0", "no", "off":
		return nil
	}
	return []error{fmt.Errorf("console.enabled: want auto, true or false, got %q", c.Enabled)}
}
