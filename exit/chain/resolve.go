package chain

import (
	"context"
	"errors"
	"fmt"

	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// FindKey returns the key published under id that the imported material
// opens: the resource key (formats 1 to 8), or the session key or
// seed-published data key (formats 9 to 11; see encryption.ResolveKey).
// It returns a *KeyNotFoundError when none opens, an error wrapping
// encryption.ErrDecryptionFailed when a key published to imported material
// does not open (a damaged dump), and the Source's errors otherwise.
func (c *Chain) FindKey(ctx context.Context, id encryption.SimpleID) ([]byte, error) {
	pubs, err := c.src.KeyPublishes(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("chain: read key publishes of %s: %w", id, err)
	}
	damaged := false
	for _, kp := range pubs {
		key, err := c.open(ctx, kp)
		switch {
		case err == nil:
			return key, nil
		case errors.Is(err, ErrNotFound):
		case errors.Is(err, keys.ErrOpenFailed), errors.Is(err, keys.ErrInvalidLength):
			damaged = true
		default:
			return nil, fmt.Errorf("chain: find key of %s: %w", id, err)
		}
	}
	if damaged {
		return nil, fmt.Errorf("chain: find key of %s: %w: a key published to imported material does not open", id, encryption.ErrDecryptionFailed)
	}
	nf := &KeyNotFoundError{ID: id, Publishes: len(pubs)}
	if len(pubs) > 0 {
		// Key publishes come oldest first: the first author created the
		// resource (every resource is published to its creator).
		user, err := c.src.DeviceUser(ctx, pubs[0].Author)
		switch {
		case err == nil:
			nf.CreatorUserID = user
			if nf.CreatorImported, err = c.src.UserImported(ctx, user); err != nil {
				return nil, fmt.Errorf("chain: read whether the creator of %s is imported: %w", id, err)
			}
		case !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("chain: read creator of %s: %w", id, err)
		}
	}
	return nil, nf
}

// open opens one key publish with imported material, or returns
// ErrNotFound when none was imported for its recipient.
func (c *Chain) open(ctx context.Context, kp KeyPublish) ([]byte, error) {
	switch kp.Nature {
	case block.KeyPublishToUser:
		pair, err := c.src.UserKey(ctx, kp.Recipient)
		if err != nil {
			return nil, err
		}
		return keys.OpenSealedKey(kp.SealedKey, pair)
	case block.KeyPublishToUserGroup:
		pair, err := c.src.GroupKey(ctx, kp.Recipient)
		if err != nil {
			return nil, err
		}
		return keys.OpenSealedKey(kp.SealedKey, pair)
	case block.KeyPublishToProvisionalUser:
		if len(kp.Recipient) != 2*keys.KeySize {
			return nil, fmt.Errorf("%w: provisional recipient of %d bytes", keys.ErrInvalidLength, len(kp.Recipient))
		}
		pair, err := c.src.ProvisionalKey(ctx, kp.Recipient[:keys.KeySize], kp.Recipient[keys.KeySize:])
		if err != nil {
			return nil, err
		}
		return keys.OpenTwoTimesSealedKey(kp.SealedKey, pair.App, pair.Tanker)
	}
	return nil, ErrNotFound
}

// KeyFinder returns an encryption.KeyFinder resolving through the chain
// with ctx.
func (c *Chain) KeyFinder(ctx context.Context) encryption.KeyFinder {
	return encryption.KeyFinderFunc(func(id encryption.SimpleID) ([]byte, error) {
		return c.FindKey(ctx, id)
	})
}
