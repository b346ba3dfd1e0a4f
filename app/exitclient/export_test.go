package exitclient

import "os"

// ReadIdentitiesLimit is readIdentities with a small line limit, so the fuzzer reaches it.
var ReadIdentitiesLimit = readIdentities

// PartName is partName, for tests of the part files a killed run leaves.
var PartName = partName

// WatchDirSyncs calls f for each directory an OutputTree syncs, in place of the sync, until
// the returned function is called. Not for parallel tests.
func WatchDirSyncs(f func(*os.File) error) (restore func()) {
	syncDirHook.Store(&f)
	return func() { syncDirHook.Store(nil) }
}
