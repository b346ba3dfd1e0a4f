package exitdb

import (
	"bytes"
	"context"

	"github.com/idvault/idvault/exit/encryption"
)

// KeyFinder resolves 16-byte IDs to keys through key_publishes and the
// imported keys (user keys, group keys via members, provisional pairs),
// with the bounded cache. Errors wrap encryption.ErrKeyNotFound (as
// *KeyNotFoundError) or ErrUnavailable; queries run with ctx.
func (db *DB) KeyFinder(ctx context.Context) encryption.KeyFinder {
	return encryption.KeyFinderFunc(func(id encryption.SimpleID) ([]byte, error) {
		if k, ok := db.cache.get(id); ok {
			return bytes.Clone(k), nil
		}
		k, err := db.chain.FindKey(ctx, id)
		if err != nil {
			return nil, err
		}
		db.cache.put(id, bytes.Clone(k))
		return k, nil
	})
}
