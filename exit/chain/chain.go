package chain

import (
	"fmt"

	"github.com/idvault/idvault/exit/keys"
)

// Chain imports identities and resolves keys for one app over a Source.
// It is safe for concurrent use if the Source is.
type Chain struct {
	appID        []byte
	appPublicKey []byte
	src          Source
}

// New returns the chain of the app (appID, appPublicKey: the trustchains
// row's id and public_signature_key) over src.
func New(appID, appPublicKey []byte, src Source) (*Chain, error) {
	if len(appID) != 32 || len(appPublicKey) != keys.KeySize {
		return nil, fmt.Errorf("new chain: app ID of %d bytes and app public key of %d bytes, want 32 and 32",
			len(appID), len(appPublicKey))
	}
	return &Chain{
		appID:        append([]byte(nil), appID...),
		appPublicKey: append([]byte(nil), appPublicKey...),
		src:          src,
	}, nil
}

// AppID returns the app this chain works for.
func (c *Chain) AppID() []byte { return append([]byte(nil), c.appID...) }
