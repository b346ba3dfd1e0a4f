// Package e2e holds the tests and benchmarks that build the real idvault binary (apptest.Binary,
// `make build`, `make release`, `go install`) and run it as a user does, beside the external
// programs it meets (PostgreSQL, MailDev, Chromium, the OpenID providers, shells,
// systemd-analyze): the server's life and the app commands against it, the identity server,
// fake authentication, verification and the console in a browser, the exit tool end to end
// (its files are named exit_*), and the walkthroughs of the README and the exit guide. Under
// `go test -short` they skip. What they share with the in-process tests of the packages they
// exercise is in app/apptest: clitest (the program run in-process), exitpgtest (a generated
// dump in PostgreSQL and an exit server over it) and idservertest.
package e2e
