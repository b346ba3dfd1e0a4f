// Package chaintest builds small trustchains for tests of the exit key
// chain: a World creates an app, users (ghost and physical devices,
// verification keys), provisional identities (claimed or not), groups
// and resources, with the exit/block and exit/keys builders, and records
// them as rows of the exit dump's tables (exit/dump/FORMAT.md). MemSource serves
// those rows and an in-memory keyring as a chain.Source; exit/exitdb's
// tests insert the same rows into PostgreSQL.
//
// It is a test helper: it calls t.Fatal on failure and holds secrets in
// plain fields.
package chaintest
