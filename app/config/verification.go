package config

import "time"

// Verification is the email verification API.
type Verification struct {
	Enabled bool `koanf:"enabled"`
	// CodeTTL is how long a code stays valid.
	CodeTTL time.Duration `koanf:"code_ttl"`
	// Placeholders are extra placeholder names replaced by the code, beside
	// SERVICE_VERIFICATION_CODE (for example TANKER_VERIFICATION_CODE).
	Placeholders []string `koanf:"placeholders"`
	// MaxWrongAttempts wrong codes lock the address for LockDuration.
	MaxWrongAttempts int           `koanf:"max_wrong_attempts"`
	LockDuration     time.Duration `koanf:"lock_duration"`
	// AddressSendLimit sends per AddressSendWindow to one (app, address).
	AddressSendLimit  int           `koanf:"address_send_limit"`
	AddressSendWindow time.Duration `koanf:"address_send_window"`
	// AppSendLimit sends per AppSendWindow for one app.
	AppSendLimit  int           `koanf:"app_send_limit"`
	AppSendWindow time.Duration `koanf:"app_send_window"`
	// IPRate sends per second refilled per client IP, up to IPBurst.
	IPRate  float64 `koanf:"ip_rate"`
	IPBurst int     `koanf:"ip_burst"`
	// IPv6Prefix groups IPv6 clients by network for the IP limit: one bucket per /IPv6Prefix
	// (a host usually holds a whole /64). IPv4 clients count one address each.
	IPv6Prefix int `koanf:"ipv6_prefix"`
}

// DefaultVerification holds the built-in verification settings.
func DefaultVerification() Verification {
	return Verification{
		Enabled: true, CodeTTL: 30 * time.Minute, Placeholders: []string{},
		MaxWrongAttempts: 3, LockDuration: 15 * time.Minute,
		AddressSendLimit: 5, AddressSendWindow: time.Hour,
		AppSendLimit: 1000, AppSendWindow: time.Hour,
		IPRate: 1, IPBurst: 20, IPv6Prefix: 64,
	}
}

// Validate returns every problem of the verification section, each naming its key (Config.Validate
// includes them).
func (v Verification) Validate() []error { return v.validate() }
