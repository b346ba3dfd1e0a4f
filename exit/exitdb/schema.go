package exitdb

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// schemaLock is the pg_advisory_xact_lock key taken while creating the
// exit_* tables, so that instances starting at once do not race on
// CREATE TABLE IF NOT EXISTS (which is not safe concurrently).
const schemaLock = 0x6964766175_6c74 // "idvault"

// exitSchema creates the tool's own tables (PostgreSQL 11 compatible).
// Private keys are stored as is: see the package documentation.
var exitSchema = []string{
	`CREATE TABLE IF NOT EXISTS exit_identities (
		trustchain_id bytea       NOT NULL,
		kind          text        NOT NULL, -- 'permanent' or 'provisional'
		identity_id   bytea       NOT NULL, -- hashed user ID, or app public signature key
		imported_at   timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (trustchain_id, kind, identity_id)
	)`,
	`CREATE TABLE IF NOT EXISTS exit_user_keys (
		trustchain_id          bytea NOT NULL,
		public_encryption_key  bytea NOT NULL,
		private_encryption_key bytea NOT NULL,
		PRIMARY KEY (trustchain_id, public_encryption_key)
	)`,
	`CREATE TABLE IF NOT EXISTS exit_group_keys (
		trustchain_id          bytea NOT NULL,
		public_encryption_key  bytea NOT NULL,
		private_encryption_key bytea NOT NULL,
		PRIMARY KEY (trustchain_id, public_encryption_key)
	)`,
	`CREATE TABLE IF NOT EXISTS exit_provisional_keys (
		trustchain_id                 bytea NOT NULL,
		app_public_signature_key      bytea NOT NULL,
		tanker_public_signature_key   bytea NOT NULL,
		app_private_encryption_key    bytea NOT NULL,
		tanker_private_encryption_key bytea NOT NULL,
		PRIMARY KEY (trustchain_id, app_public_signature_key, tanker_public_signature_key)
	)`,
}

// createTables creates the exit_* tables if missing, in one transaction
// holding an advisory lock.
func (db *DB) createTables(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		for _, stmt := range exitSchema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	return dbError(ctx, "create exit tables", err)
}
