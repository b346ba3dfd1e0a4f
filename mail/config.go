package mail

import "github.com/idvault/idvault/mail/mailconfig"

// Config is the `mail` section of idvault's configuration (package mailconfig).
type Config = mailconfig.Config

// TLSMode is the transport security policy towards the SMTP server.
type TLSMode = mailconfig.TLSMode

// TLS policies (values of the `mail.tls` key).
const (
	TLSMandatory     = mailconfig.TLSMandatory
	TLSOpportunistic = mailconfig.TLSOpportunistic
	TLSNone          = mailconfig.TLSNone
	TLSImplicit      = mailconfig.TLSImplicit
)

// Defaults applied by New for keys left at their zero value.
const (
	DefaultPoolSize    = mailconfig.DefaultPoolSize
	DefaultIdleTimeout = mailconfig.DefaultIdleTimeout
	DefaultTimeout     = mailconfig.DefaultTimeout
	DefaultPort        = mailconfig.DefaultPort
)

// DefaultConfig returns a Config holding the defaults (mailconfig.Default).
func DefaultConfig() Config { return mailconfig.Default() }
