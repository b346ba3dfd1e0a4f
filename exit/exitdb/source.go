package exitdb

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/idvault/idvault/exit/chain"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// source implements chain.Source with one SQL statement per method, each
// filtered by the app's trustchain ID.
type source struct {
	db *DB
}

var _ chain.Source = (*source)(nil)

// collect runs a query and collects its rows into T by column position.
func collect[T any](ctx context.Context, s *source, op, sql string, args ...any) ([]T, error) {
	rows, err := s.db.pool.Query(ctx, sql, append([]any{s.db.appID}, args...)...)
	if err != nil {
		return nil, dbError(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[T])
	if err != nil {
		return nil, dbError(ctx, op, err)
	}
	return out, nil
}

// one runs a query expected to return at most one row, scanning it into
// dst; it returns chain.ErrNotFound when there is none.
func (s *source) one(ctx context.Context, op, sql string, args []any, dst ...any) error {
	err := s.db.pool.QueryRow(ctx, sql, append([]any{s.db.appID}, args...)...).Scan(dst...)
	if errors.Is(err, pgx.ErrNoRows) {
		return chain.ErrNotFound
	}
	return dbError(ctx, op, err)
}

func (s *source) Users(ctx context.Context, userIDs [][]byte) ([]chain.User, error) {
	return collect[chain.User](ctx, s, "read users", `
		SELECT user_id, encrypted_verification_key_for_user_secret FROM users
		WHERE trustchain_id = $1 AND user_id = ANY($2::bytea[])`, userIDs)
}

func (s *source) GhostDevices(ctx context.Context, userIDs, publicSignatureKeys [][]byte) ([]chain.Device, error) {
	return collect[chain.Device](ctx, s, "read ghost devices", `
		SELECT DISTINCT ON (d.user_id, d.public_signature_key)
		       d.user_id, d.public_signature_key, d.device_id, d.public_encryption_key,
		       d.user_public_encryption_key, d.sealed_user_private_encryption_key
		FROM devices d
		JOIN unnest($2::bytea[], $3::bytea[]) AS k(user_id, public_signature_key)
		  ON d.user_id = k.user_id AND d.public_signature_key = k.public_signature_key
		WHERE d.trustchain_id = $1 AND d.is_ghost_device
		ORDER BY d.user_id, d.public_signature_key, d.created_at`, userIDs, publicSignatureKeys)
}

func (s *source) Claims(ctx context.Context, userIDs [][]byte) ([]chain.Claim, error) {
	return collect[chain.Claim](ctx, s, "read provisional identity claims", `
		SELECT user_id, app_public_signature_key, tanker_public_signature_key, user_public_encryption_key,
		       sealed_private_encryption_keys
		FROM provisional_identity_claims
		WHERE trustchain_id = $1 AND user_id = ANY($2::bytea[])
		ORDER BY created_at`, userIDs)
}

func (s *source) TankerProvisionalKeys(ctx context.Context, appPublicSignatureKeys [][]byte) ([]chain.TankerProvisionalKey, error) {
	return collect[chain.TankerProvisionalKey](ctx, s, "read tanker provisional keys", `
		SELECT target, hashed_value, app_public_signature_key, tanker_public_signature_key,
		       tanker_public_encryption_key, tanker_private_encryption_key
		FROM tanker_provisional_keys
		WHERE trustchain_id = $1 AND app_public_signature_key = ANY($2::bytea[])`, appPublicSignatureKeys)
}

// groupKeyOf is the public encryption key of a group member row's group,
// taken from the group's creation block row.
const groupKeyOf = `(SELECT g.public_encryption_key FROM user_groups g
		 WHERE g.trustchain_id = m.trustchain_id AND g.group_id = m.group_id
		 ORDER BY g.nature IN (10, 15, 17) DESC, g.created_at LIMIT 1)`

func (s *source) GroupMembers(ctx context.Context, userPublicKeys [][]byte) ([]chain.GroupMember, error) {
	return collect[chain.GroupMember](ctx, s, "read group members", `
		SELECT m.group_id, `+groupKeyOf+`, m.user_public_encryption_key, m.sealed_group_private_encryption_key
		FROM user_group_members m
		WHERE m.trustchain_id = $1 AND m.user_public_encryption_key = ANY($2::bytea[])`, userPublicKeys)
}

func (s *source) GroupProvisionalMembers(ctx context.Context, appPublicSignatureKeys, tankerPublicSignatureKeys [][]byte) ([]chain.GroupProvisionalMember, error) {
	return collect[chain.GroupProvisionalMember](ctx, s, "read group provisional members", `
		SELECT m.group_id, `+groupKeyOf+`, m.app_public_signature_key, m.tanker_public_signature_key,
		       m.two_times_sealed_group_private_encryption_key
		FROM user_group_provisional_members m
		JOIN (SELECT DISTINCT * FROM unnest($2::bytea[], $3::bytea[])) AS k(app, tanker)
		  ON m.app_public_signature_key = k.app AND m.tanker_public_signature_key = k.tanker
		WHERE m.trustchain_id = $1`, appPublicSignatureKeys, tankerPublicSignatureKeys)
}

func (s *source) KeyPublishes(ctx context.Context, id encryption.SimpleID) ([]chain.KeyPublish, error) {
	return collect[chain.KeyPublish](ctx, s, "read key publishes", `
		SELECT nature, recipient, sealed_key, author FROM key_publishes
		WHERE trustchain_id = $1 AND resource_id = $2
		ORDER BY created_at`, id[:])
}

func (s *source) DeviceUser(ctx context.Context, deviceID []byte) ([]byte, error) {
	var user []byte
	err := s.one(ctx, "read device", `
		SELECT user_id FROM devices WHERE trustchain_id = $1 AND device_id = $2`,
		[]any{deviceID}, &user)
	return user, err
}

// pairOf rebuilds a key pair from a stored private key.
func pairOf(priv []byte) (keys.EncryptionKeyPair, error) {
	kp, err := keys.EncryptionKeyPairFromPrivate(priv)
	if err != nil {
		return kp, errors.New("exit database: a stored private key is not 32 bytes")
	}
	return kp, nil
}

func (s *source) UserKey(ctx context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	var priv []byte
	if err := s.one(ctx, "read imported user key", `
		SELECT private_encryption_key FROM exit_user_keys
		WHERE trustchain_id = $1 AND public_encryption_key = $2`, []any{pub}, &priv); err != nil {
		return keys.EncryptionKeyPair{}, err
	}
	return pairOf(priv)
}

func (s *source) GroupKey(ctx context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	var priv []byte
	if err := s.one(ctx, "read imported group key", `
		SELECT private_encryption_key FROM exit_group_keys
		WHERE trustchain_id = $1 AND public_encryption_key = $2`, []any{pub}, &priv); err != nil {
		return keys.EncryptionKeyPair{}, err
	}
	return pairOf(priv)
}

func (s *source) ProvisionalKey(ctx context.Context, appPublicSignatureKey, tankerPublicSignatureKey []byte) (chain.ProvisionalKeyPair, error) {
	var p chain.ProvisionalKeyPair
	var app, tanker []byte
	if err := s.one(ctx, "read imported provisional key", `
		SELECT app_private_encryption_key, tanker_private_encryption_key FROM exit_provisional_keys
		WHERE trustchain_id = $1 AND app_public_signature_key = $2 AND tanker_public_signature_key = $3`,
		[]any{appPublicSignatureKey, tankerPublicSignatureKey}, &app, &tanker); err != nil {
		return p, err
	}
	var err error
	if p.App, err = pairOf(app); err != nil {
		return p, err
	}
	if p.Tanker, err = pairOf(tanker); err != nil {
		return p, err
	}
	copy(p.AppPublicSignatureKey[:], appPublicSignatureKey)
	copy(p.TankerPublicSignatureKey[:], tankerPublicSignatureKey)
	return p, nil
}

func (s *source) UserImported(ctx context.Context, userID []byte) (bool, error) {
	var imported bool
	err := s.one(ctx, "read imported identities", `
		SELECT EXISTS (SELECT 1 FROM exit_identities
		WHERE trustchain_id = $1 AND kind = 'permanent' AND identity_id = $2)`, []any{userID}, &imported)
	return imported, err
}
