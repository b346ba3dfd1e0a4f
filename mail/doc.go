// Package mail sends idvault's transactional emails (verification codes) over SMTP.
//
// It is the only idvault package that imports go-mail, and it imports no other idvault
// package. A Sender keeps a small pool of SMTP connections and reuses them across sends:
// a connection serves one send at a time, is RSET between messages, is discarded on any
// error, and is closed after sitting idle for Config.IdleTimeout. A pooled connection that
// the server closed in the meantime is detected at MAIL FROM (no reply, or 421), before any
// of the message is sent, and the send is transparently retried once on a freshly dialled
// connection.
//
// The TLS policy always comes from Config.TLS (go-mail's own default, mandatory STARTTLS,
// is never relied on). STARTTLS and SMTP AUTH are driven by this package so that a failure
// reports the exact stage (see SendError and the Stage* constants).
//
// Nothing in this package logs or returns a message's subject or body, which carry
// verification codes: errors name the failing stage, the SMTP reply code and, for the
// connection-level stages only, the server's reply text (at most 500 bytes of it). Logs carry the recipient's domain,
// never the full address.
package mail
