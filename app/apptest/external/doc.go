// Package external is what every test harness shares about the external tools tests run
// (PostgreSQL, MailDev and the other npm tools, Chromium, age, systemd-analyze, fish): one rule
// for a missing tool (skip the test, or fail it under IDVAULT_REQUIRE_EXTERNAL=1), where
// `make deps` installs the npm tools, a buffer for a child process's output, a full disk (a
// tmpfs mounted small: Tmpfs, FillTmpfs), and free ports for the servers tests start (FreePort,
// below the ephemeral range).
//
// It imports no idvault package, so that app/apptest, mail/mailtest, exit/pgtest,
// exit/dump/dumptest and the store's tests can all use it without breaking the dependency
// rule (.ci/depcheck).
package external
