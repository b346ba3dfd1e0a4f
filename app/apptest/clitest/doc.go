// Package clitest holds the helpers that run the idvault program in-process (cli.Run), shared
// by app/cli's tests and the end-to-end tests of app/e2e that mix in-process runs with runs of
// the real binary.
package clitest
