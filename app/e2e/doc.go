// Package e2e holds tests that build the real idvault binary (apptest.Binary) and run it as a
// user does, beside the external programs it meets (PostgreSQL, shells, systemd-analyze).
// Under `go test -short` they skip.
package e2e
