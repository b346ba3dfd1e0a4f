package exitserver

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's GOGC for an exit server process (TuneGC). A small
// request leaves a few KB of garbage behind (net/http's request and header maps, mostly), and
// the process's live heap is a few MB: under GOGC's default of 100 the collector would run each
// time the heap reaches its floor of 4 MB, dozens of times a second under load, a large share
// of a 1 KiB decrypt's CPU. At 200 the floor is 8 MB, or three times the live heap, which gives
// the 1 KiB decrypts back what net/http costs per request; 400 would give them no more
// and let a server under decrypt-table's batches peak above 64 MiB (exit/README.md, "Garbage
// collection"). The soft memory limit bounds the heap.
const GCPercent = 200

// MemoryLimitHeadroom is what the exit server's soft memory limit allows above
// exit.memory_budget (TuneGC): connections' buffers, the key cache, the runtime.
const MemoryLimitHeadroom = 128 << 20

// TuneGC sets the process's garbage collector as `idvault exit` runs: GOGC at GCPercent,
// unless the operator set GOGC, and a soft memory limit of memoryBudget plus
// MemoryLimitHeadroom, unless the operator set GOMEMLIMIT. The limit makes the collector
// return request buffers before the heap doubles (GOGC would let 256 MiB in use take 512 MiB
// and more). It returns a function that puts the previous settings back.
func TuneGC(memoryBudget int64) (restore func()) {
	percent, limit := -2, int64(-1) // -2, -1: left as they are
	if _, set := os.LookupEnv("GOGC"); !set {
		percent = debug.SetGCPercent(GCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		limit = debug.SetMemoryLimit(memoryBudget + MemoryLimitHeadroom)
	}
	return func() {
		if percent != -2 {
			debug.SetGCPercent(percent)
		}
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}
