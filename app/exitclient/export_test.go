package exitclient

// ReadIdentitiesLimit is readIdentities with a small line limit, so the fuzzer reaches it.
var ReadIdentitiesLimit = readIdentities

// PartName is partName, for tests of the part files a killed run leaves.
var PartName = partName
