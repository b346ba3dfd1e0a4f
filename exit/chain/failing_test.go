package chain

import (
	"context"

	"idvault/exit/encryption"
)

// failing is a Source whose every read fails.
type failing struct {
	*memSource
	err error
}

func (f failing) User(context.Context, []byte) (User, error) { return User{}, f.err }
func (f failing) KeyPublishes(context.Context, encryption.SimpleID) ([]KeyPublish, error) {
	return nil, f.err
}
