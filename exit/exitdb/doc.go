// Package exitdb is the exit tool's PostgreSQL side: it reads a database
// restored from an exit dump (exit/dump/FORMAT.md), imports private
// identities into the tool's own exit_* tables, and resolves resource keys
// through exit/chain. It is the only package of exit/ that uses pgx.
//
// Every query is filtered by trustchain_id = the configured app, so rows
// of other apps in the same dump are never used. All state lives in the
// database: several instances (several *DB, several processes) on one
// database share what any of them imported.
//
// # The exit_* tables and private keys
//
// Imported material is stored as is, private keys included, in
// exit_user_keys, exit_group_keys and exit_provisional_keys (and the list
// of imported identities, by hashed user ID or app public signature key,
// in exit_identities). The database is the operator's exit workspace:
// whoever reads those tables can decrypt what the imported identities can,
// so protect it like the identities themselves. Forget empties them and
// leaves none of their keys in the tables' files or statistics, nor in
// pg_statistic's file. Nothing in this package logs key material, and no
// error carries it. The SQL keeps to PostgreSQL 11.
//
// # Errors
//
// A database that cannot be reached (at Open or later) gives errors
// wrapping ErrUnavailable; the pool reconnects by itself when it is back.
// A dump missing tables or the app's trustchains row gives *SchemaError.
// Bad identities give *ImportError listing each entry by index. A key that
// no imported identity opens gives *KeyNotFoundError (errors.Is
// encryption.ErrKeyNotFound), naming the resource's creator when the dump
// tells it.
package exitdb
