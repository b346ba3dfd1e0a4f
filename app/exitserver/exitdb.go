package exitserver

import (
	"context"
	"errors"
	"fmt"

	"idvault/exit/encryption"
	"idvault/exit/exitdb"
)

// FromExitDB adapts the PostgreSQL exit database to DB, translating its errors to this
// package's: exitdb.ErrUnavailable, *exitdb.ImportError and *exitdb.KeyNotFoundError.
func FromExitDB(db *exitdb.DB) DB { return pgDB{db} }

type pgDB struct{ db *exitdb.DB }

func (p pgDB) Ping(ctx context.Context) error { return translate(p.db.Ping(ctx)) }

func (p pgDB) Import(ctx context.Context, identities []string) (ImportResult, error) {
	res, err := p.db.Import(ctx, identities)
	var ie *exitdb.ImportError
	if errors.As(err, &ie) {
		entries := make([]EntryError, len(ie.Entries))
		for i, e := range ie.Entries {
			entries[i] = EntryError{Index: e.Index, Reason: e.Reason}
		}
		return ImportResult{}, &ImportError{Entries: entries}
	}
	if err != nil {
		return ImportResult{}, translate(err)
	}
	return ImportResult{Imported: res.Imported, AlreadyImported: res.AlreadyImported}, nil
}

func (p pgDB) KeyFinder(ctx context.Context) encryption.KeyFinder {
	kf := p.db.KeyFinder(ctx)
	return encryption.KeyFinderFunc(func(id encryption.SimpleID) ([]byte, error) {
		k, err := kf.FindKey(id)
		if err != nil {
			return nil, translate(err)
		}
		return k, nil
	})
}

// translate keeps err in the chain and adds this package's view of it.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var knf *exitdb.KeyNotFoundError
	switch {
	case errors.Is(err, exitdb.ErrUnavailable):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.As(err, &knf):
		return &KeyNotFoundError{CreatorUserID: knf.CreatorUserID, Err: err, published: knf.Published()}
	}
	return err
}
