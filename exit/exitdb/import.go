package exitdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idvault/idvault/exit/chain"
)

// ImportResult counts the identities of a batch: newly imported ones, and
// ones already imported (by this or another instance, or earlier in the
// batch).
type ImportResult struct {
	Imported        int `json:"imported"`
	AlreadyImported int `json:"already_imported"`
}

// Import imports private identities (permanent and provisional, any Tanker
// library's field order). All or nothing: if any entry is bad, nothing is
// stored and the error is an *ImportError listing every bad entry.
// Re-importing is harmless (counted in AlreadyImported), and concurrent
// imports of the same identity through several instances all succeed.
func (db *DB) Import(ctx context.Context, identities []string) (ImportResult, error) {
	if len(identities) == 0 {
		return ImportResult{}, nil
	}
	materials, errs, err := db.chain.ImportBatch(ctx, identities)
	if err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	var bad ImportError
	for i, err := range errs {
		var inv *chain.InvalidIdentityError
		if errors.As(err, &inv) {
			bad.Entries = append(bad.Entries, EntryError{Index: i, Reason: inv.Reason})
		}
	}
	if len(bad.Entries) > 0 {
		return ImportResult{}, &bad
	}
	return db.store(ctx, materials)
}

// rows of the exit_* tables for one batch, sorted so that concurrent
// batches lock rows in the same order (no deadlock between instances).
type batchRows struct {
	idID                 [][]byte
	kinds                []string
	userPub, userPriv    [][]byte
	groupPub, groupPriv  [][]byte
	provApp, provTanker  [][]byte
	provAppKey, provTKey [][]byte
}

func collectRows(materials []*chain.Material) batchRows {
	type pair struct{ pub, priv []byte }
	type ident struct {
		kind string
		id   []byte
	}
	type prov struct{ app, tanker, appKey, tankerKey []byte }
	var ids []ident
	var users, groups []pair
	var provs []prov
	for _, m := range materials {
		ids = append(ids, ident{m.Kind.String(), m.ID})
		for _, k := range m.UserKeys {
			users = append(users, pair{bytes.Clone(k.Public[:]), bytes.Clone(k.Private[:])})
		}
		for _, k := range m.GroupKeys {
			groups = append(groups, pair{bytes.Clone(k.Public[:]), bytes.Clone(k.Private[:])})
		}
		for _, p := range m.ProvisionalKeys {
			provs = append(provs, prov{
				bytes.Clone(p.AppPublicSignatureKey[:]), bytes.Clone(p.TankerPublicSignatureKey[:]),
				bytes.Clone(p.App.Private[:]), bytes.Clone(p.Tanker.Private[:]),
			})
		}
	}
	slices.SortFunc(ids, func(a, b ident) int {
		if a.kind != b.kind {
			return cmpString(a.kind, b.kind)
		}
		return bytes.Compare(a.id, b.id)
	})
	byPub := func(a, b pair) int { return bytes.Compare(a.pub, b.pub) }
	slices.SortFunc(users, byPub)
	slices.SortFunc(groups, byPub)
	slices.SortFunc(provs, func(a, b prov) int {
		if c := bytes.Compare(a.app, b.app); c != 0 {
			return c
		}
		return bytes.Compare(a.tanker, b.tanker)
	})
	var r batchRows
	for _, i := range ids {
		r.kinds = append(r.kinds, i.kind)
		r.idID = append(r.idID, i.id)
	}
	for _, u := range users {
		r.userPub, r.userPriv = append(r.userPub, u.pub), append(r.userPriv, u.priv)
	}
	for _, g := range groups {
		r.groupPub, r.groupPriv = append(r.groupPub, g.pub), append(r.groupPriv, g.priv)
	}
	for _, p := range provs {
		r.provApp, r.provTanker = append(r.provApp, p.app), append(r.provTanker, p.tanker)
		r.provAppKey, r.provTKey = append(r.provAppKey, p.appKey), append(r.provTKey, p.tankerKey)
	}
	return r
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// store writes a batch's material in one transaction, retried when
// PostgreSQL reports a deadlock or serialization failure.
func (db *DB) store(ctx context.Context, materials []*chain.Material) (ImportResult, error) {
	r := collectRows(materials)
	var res ImportResult
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		res, err = db.storeOnce(ctx, r, len(materials))
		var pg *pgconn.PgError
		if err == nil || !errors.As(err, &pg) || (pg.Code != "40P01" && pg.Code != "40001") {
			break
		}
	}
	if err != nil {
		return ImportResult{}, dbError(ctx, "store imported keys", err)
	}
	return res, nil
}

func (db *DB) storeOnce(ctx context.Context, r batchRows, total int) (ImportResult, error) {
	var res ImportResult
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var inserted int
		if err := tx.QueryRow(ctx, `
			WITH ins AS (
				INSERT INTO exit_identities (trustchain_id, kind, identity_id)
				SELECT $1, t.kind, t.id FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS t(kind, id, n)
				ORDER BY t.n
				ON CONFLICT DO NOTHING
				RETURNING 1)
			SELECT count(*) FROM ins`, db.appID, r.kinds, r.idID).Scan(&inserted); err != nil {
			return err
		}
		res = ImportResult{Imported: inserted, AlreadyImported: total - inserted}
		for _, t := range []string{"exit_user_keys", "exit_group_keys"} {
			pub, priv := r.userPub, r.userPriv
			if t == "exit_group_keys" {
				pub, priv = r.groupPub, r.groupPriv
			}
			if len(pub) == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO `+t+` (trustchain_id, public_encryption_key, private_encryption_key)
				SELECT $1, t.pub, t.priv FROM unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS t(pub, priv, n)
				ORDER BY t.n
				ON CONFLICT DO NOTHING`, db.appID, pub, priv); err != nil {
				return err
			}
		}
		if len(r.provApp) > 0 {
			if _, err := tx.Exec(ctx, `
				INSERT INTO exit_provisional_keys (trustchain_id, app_public_signature_key, tanker_public_signature_key,
					app_private_encryption_key, tanker_private_encryption_key)
				SELECT $1, t.app, t.tanker, t.app_key, t.tanker_key
				FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[]) WITH ORDINALITY AS t(app, tanker, app_key, tanker_key, n)
				ORDER BY t.n
				ON CONFLICT DO NOTHING`, db.appID, r.provApp, r.provTanker, r.provAppKey, r.provTKey); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}
