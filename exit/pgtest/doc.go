// Package pgtest gives tests a real, throwaway PostgreSQL.
//
// The first call to NewDB in a test binary starts one cluster for the whole run: initdb into a
// fresh temp directory (as the `postgres` OS user when the tests run as root, since initdb
// refuses root), trust authentication, listening on a free loopback port and on a socket in
// that directory, durability switched off for speed. Every NewDB then creates a fresh database
// for its test and drops it when the test ends.
//
// The cluster and its directory go away when the test binary exits, however it exits: a small
// watcher process (started detached, so `go test` does not wait for it) stops the server with a
// fast shutdown and removes the directory once the test process is gone, and the server itself
// gets SIGINT if the test process dies first. Directories left by a machine crash are swept by
// the next run.
//
// The binaries are looked for in $IDVAULT_PG_BIN when it is set (only there), else in
// /usr/lib/postgresql/<newest>/bin, then $PATH. When none is found the test is skipped with a message, or fails when
// IDVAULT_REQUIRE_EXTERNAL=1 (as `make test` sets it; `make deps` installs PostgreSQL).
package pgtest
