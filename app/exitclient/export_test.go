package exitclient

// ReadIdentitiesLimit is readIdentities with a small line limit, so the fuzzer reaches it.
var ReadIdentitiesLimit = readIdentities
