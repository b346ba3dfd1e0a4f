// Package store keeps idvault's state in one bbolt file: apps, identity records, verification
// codes and throttling counters.
//
// It is the only package that imports bbolt. Values that would let a reader impersonate a user
// or an app (app secrets, private identities, test-mode verification codes) are sealed with
// XChaCha20-Poly1305 under a master key that lives outside the bbolt file (see MasterKey), so a
// copied data file or backup alone reveals no secret. Each sealed value is bound to its bucket
// and key as associated data, so a value cannot be moved to another record unnoticed.
//
// Every write is committed by bbolt, which fsyncs on commit: when a method returns nil, the change
// is on disk. Identity record and verification code writes (with their throttle counters) that
// arrive together share one transaction (a leader/follower group commit, see groupcommit.go),
// which answers no write before the commit that holds it; a lone write commits at once. Admin
// writes (apps) and the sweeps use their own transaction. Methods never perform network I/O inside
// a transaction.
//
// Reads of identity records (PrivateRecord, Publics) are answered from a bounded in-memory cache
// when the record was read or written before (records_cache.go): a write shows in every read
// that starts after it returns, a deleted app's records are dropped with it, and the cache holds
// at most Options.RecordCacheBytes (DefaultRecordCacheBytes, 32 MiB). It holds private identities
// in process memory, as a request handling them does; the file and its backups stay sealed.
//
// A damaged data file is an error, never a crash (damaged.go, pagecheck.go): bbolt trusts its
// pages, so a damaged one makes it panic or read past its memory map. Open and VerifyFile walk
// every page in use before bbolt does (bbolt's own walks run in goroutines where nothing can be
// caught), every bbolt call runs under a guard that turns a panic or a memory fault into
// ErrDamaged, and a value that does not decode is ErrDamaged too. The error names the file and
// says what to do (restore it from a backup). Once met, Ping reports it and writes are refused.
package store
