// Package mailtest provides SMTP servers for tests: an in-process server built on
// emersion/go-smtp (Start) that records messages, counts connections, offers STARTTLS or
// implicit TLS with a self-signed certificate, requires AUTH PLAIN on demand and injects
// faults (replies, stalls, dropped connections) at a chosen stage; and a harness for a real
// MailDev process with a client for its REST API (StartMailDev).
//
// It is meant for tests of any idvault package that sends mail, and imports no idvault
// package but the leaf app/apptest/external (the rule for a missing MailDev, where npm
// installed it, a buffer for its output).
package mailtest
