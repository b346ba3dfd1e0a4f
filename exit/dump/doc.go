// Package dump is the exit dump format (exit/dump/FORMAT.md) and its loader: the names of a
// dump's files and its schema, the readers of app.json, identities.jsonl, manifest.jsonl and
// resource_keys.jsonl, and Load, which runs a dump's SQL into PostgreSQL (`idvault exit
// load-dump`) once every statement has passed CheckStatement: Parser splits the script as psql
// does, and admits only what an exit dump holds. The synthetic generator is exit/dump/gen.
package dump
