//go:build race

package cli_test

// raceEnabled: the race detector's shadow memory roughly doubles a process's resident memory.
const raceEnabled = true
