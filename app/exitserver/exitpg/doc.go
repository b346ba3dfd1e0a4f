// Package exitpg holds the exit server's tests against a real PostgreSQL: a generated dump
// (decoy apps included) loaded by exit/dump, opened by exit/exitdb, served by exitserver and
// driven through HTTP by exitclient. It has no code of its own; its tests live apart so that
// stopping the test cluster cannot disturb other packages' tests.
package exitpg
