package exitdb

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/chain"
)

// DefaultKeyCacheSize is the number of resolved keys cached when
// Config.KeyCacheSize is 0.
const DefaultKeyCacheSize = 100_000

// Config configures Open.
type Config struct {
	// DSN is a PostgreSQL connection string or URL.
	DSN string
	// AppID is the 32-byte app (trustchain) ID: only rows of this
	// trustchain are ever used.
	AppID []byte
	// KeyCacheSize is the number of resolved resource keys cached (a
	// bounded LRU); 0 means DefaultKeyCacheSize.
	KeyCacheSize int
	// MaxConns is the pool size; 0 keeps pgx's default.
	MaxConns int32
}

// DB is an exit database of one app. It is safe for concurrent use.
type DB struct {
	pool  *pgxpool.Pool
	appID []byte
	chain *chain.Chain
	cache *keyCache
}

// errInvalidDSN is why a DSN cannot be used: pgx's own message may quote the DSN, password
// included, so it is never passed on.
var errInvalidDSN = errors.New("exit database: invalid DSN: not a PostgreSQL connection string or URL")

// Open connects (pgx pool), checks the dump's tables and the app's
// trustchains row exist (*SchemaError naming what is missing otherwise),
// and creates the tool's own exit_* tables if missing, safely when several
// instances start at once. Connection failure wraps ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if len(cfg.AppID) != 32 {
		return nil, fmt.Errorf("exit database: app ID of %d bytes, want 32", len(cfg.AppID))
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, errInvalidDSN
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, dbError(ctx, "open", err)
	}
	db := &DB{pool: pool, appID: bytes.Clone(cfg.AppID)}
	if err := db.open(ctx, cfg); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) open(ctx context.Context, cfg Config) error {
	if err := db.pool.Ping(ctx); err != nil {
		return dbError(ctx, "connect", err)
	}
	appPublicKey, err := db.checkDump(ctx)
	if err != nil {
		return err
	}
	if err := db.createTables(ctx); err != nil {
		return err
	}
	src := &source{db: db}
	if db.chain, err = chain.New(db.appID, appPublicKey, src); err != nil {
		return fmt.Errorf("exit database: %w", err)
	}
	size := cfg.KeyCacheSize
	if size <= 0 {
		size = DefaultKeyCacheSize
	}
	db.cache = newKeyCache(size)
	return nil
}

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// Ping checks the database answers; the error wraps ErrUnavailable when
// it does not.
func (db *DB) Ping(ctx context.Context) error {
	return dbError(ctx, "ping", db.pool.Ping(ctx))
}

// AppID returns the app this database serves.
func (db *DB) AppID() []byte { return bytes.Clone(db.appID) }

// dumpTables are the tables of exit/dump/FORMAT.md.
var dumpTables = []string{
	"trustchains", "users", "devices", "user_groups", "user_group_members",
	"user_group_provisional_members", "key_publishes", "provisional_identity_claims",
	"tanker_provisional_keys",
}

// checkDump checks the dump's tables and the app's trustchains row, and
// returns the app public signature key.
func (db *DB) checkDump(ctx context.Context) ([]byte, error) {
	rows, err := db.pool.Query(ctx,
		`SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(quote_ident(t)) IS NULL ORDER BY t`, dumpTables)
	if err != nil {
		return nil, dbError(ctx, "check tables", err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, dbError(ctx, "check tables", err)
	}
	if len(missing) > 0 {
		se := &SchemaError{}
		for _, t := range missing {
			se.Missing = append(se.Missing, "table "+t)
		}
		return nil, se
	}
	var pub, root []byte
	err = db.pool.QueryRow(ctx,
		`SELECT public_signature_key, root_block FROM trustchains WHERE id = $1`, db.appID).Scan(&pub, &root)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &SchemaError{Missing: []string{"trustchains row for app " + base64.StdEncoding.EncodeToString(db.appID)}}
	}
	if err != nil {
		return nil, dbError(ctx, "read trustchains row", err)
	}
	if err := checkRoot(db.appID, pub, root); err != nil {
		return nil, err
	}
	return pub, nil
}

// checkRoot checks that the root block is the app's trustchain creation:
// its hash is the app ID and its payload the public signature key.
func checkRoot(appID, pub, root []byte) error {
	bad := fmt.Errorf("exit database: the trustchains row of app %s is inconsistent: its root block is not the app's trustchain creation",
		base64.StdEncoding.EncodeToString(appID))
	blk, err := block.Parse(root)
	if err != nil || blk.Nature != block.TrustchainCreation {
		return bad
	}
	h := blk.Hash()
	a, err := blk.Action()
	if err != nil || !bytes.Equal(h[:], appID) {
		return bad
	}
	if tc, ok := a.(*block.TrustchainCreationAction); !ok || !bytes.Equal(tc.PublicSignatureKey[:], pub) {
		return bad
	}
	return nil
}
