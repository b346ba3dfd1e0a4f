package exitclient

import "io"

// ReadIdentitiesLimit is readIdentities with a small line limit, so the fuzzer reaches it.
var ReadIdentitiesLimit = readIdentities

// BatchBody is what DecryptBatch sends for items, read through its streaming body.
func BatchBody(items [][]byte, r func(io.Reader) io.Reader) ([]byte, error) {
	return io.ReadAll(r(&batchReader{items: items}))
}
