package exitdb

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/idvault/idvault/exit/encryption"
)

// KeyAudit is what the database says of one 16-byte ID without opening any key: whether a key
// published under it goes to material that was imported, and otherwise who holds it.
type KeyAudit struct {
	// Reachable: a key publish of the ID goes to an imported user key, group key or provisional
	// pair (the chain opens it when decrypting).
	Reachable bool
	// Holders are the hashed user IDs (32 bytes) whose identity would reach the key when the ID
	// is not reachable, sorted: users it was published to, members of a group it was published
	// to (by user key, or by a provisional identity they claimed), and users who claimed a
	// provisional identity it was published to. Empty when no user of the app holds it (no
	// key publish, or only to provisional identities nobody claimed).
	Holders [][]byte
	// Provisional are the provisional identities nobody claimed whose private identity would
	// reach the key when the ID is not reachable: it was published to them, or to a group they
	// are a provisional member of. Sorted by target, then hash; only those whose Tanker half
	// the dump holds (tanker_provisional_keys), since no other can be opened. A provisional
	// identity a user claimed is named by that user, in Holders. Holders and Provisional hold
	// at most MaxHolders together, users first.
	Provisional []ProvisionalHolder
}

// ProvisionalHolder is a provisional identity, named as its public identity names it.
type ProvisionalHolder struct {
	// Target is "email" or "phone_number" (tanker_provisional_keys.target).
	Target string
	// HashedValue is the value of its public identity (32 bytes): H_32(email), or the phone
	// number hashed with a salt derived from its private signature key.
	HashedValue []byte
}

// reachableSQL keeps the IDs of $2 with a key publish whose recipient was imported.
const reachableSQL = `
	SELECT DISTINCT kp.resource_id FROM key_publishes kp
	WHERE kp.trustchain_id = $1 AND kp.resource_id = ANY($2::bytea[]) AND (
	   (kp.nature = 8 AND EXISTS (SELECT 1 FROM exit_user_keys u
	        WHERE u.trustchain_id = $1 AND u.public_encryption_key = kp.recipient))
	OR (kp.nature = 11 AND EXISTS (SELECT 1 FROM exit_group_keys g
	        WHERE g.trustchain_id = $1 AND g.public_encryption_key = kp.recipient))
	OR (kp.nature = 13 AND EXISTS (SELECT 1 FROM exit_provisional_keys p
	        WHERE p.trustchain_id = $1 AND p.app_public_signature_key = substring(kp.recipient from 1 for 32)
	          AND p.tanker_public_signature_key = substring(kp.recipient from 33 for 32))))`

// holdersSQL lists (ID, user ID, target, hashed value) for every holder of a key published
// under an ID of $2, through every route of the chain: users (user ID set), then provisional
// identities nobody claimed whose Tanker half the dump holds (target and hashed value set); at
// most $3 per ID.
const holdersSQL = `
	WITH kp AS (
		SELECT resource_id, nature, recipient FROM key_publishes
		WHERE trustchain_id = $1 AND resource_id = ANY($2::bytea[])
	), grp AS (
		SELECT DISTINCT kp.resource_id, g.group_id FROM kp
		JOIN user_groups g ON g.trustchain_id = $1 AND g.public_encryption_key = kp.recipient
		WHERE kp.nature = 11
	), userkeys AS (
		SELECT kp.resource_id, kp.recipient AS user_key, NULL::bytea AS user_id FROM kp WHERE kp.nature = 8
		UNION
		SELECT grp.resource_id, m.user_public_encryption_key, m.user_id FROM grp
		JOIN user_group_members m ON m.trustchain_id = $1 AND m.group_id = grp.group_id
	), provs AS (
		SELECT kp.resource_id, substring(kp.recipient from 1 for 32) AS app, substring(kp.recipient from 33 for 32) AS tanker
		FROM kp WHERE kp.nature = 13
		UNION
		SELECT grp.resource_id, pm.app_public_signature_key, pm.tanker_public_signature_key FROM grp
		JOIN user_group_provisional_members pm ON pm.trustchain_id = $1 AND pm.group_id = grp.group_id
	)
	SELECT resource_id, user_id, target, hashed FROM (
		SELECT resource_id, user_id, target, hashed,
			row_number() OVER (PARTITION BY resource_id ORDER BY user_id NULLS LAST, target, hashed) AS n FROM (
			SELECT DISTINCT resource_id, user_id, target, hashed FROM (
				SELECT uk.resource_id, coalesce(uk.user_id, d.user_id) AS user_id, NULL::text AS target, NULL::bytea AS hashed
				FROM userkeys uk
				LEFT JOIN devices d ON uk.user_id IS NULL AND d.trustchain_id = $1 AND d.user_public_encryption_key = uk.user_key
				UNION ALL
				SELECT p.resource_id, c.user_id, NULL, NULL FROM provs p
				JOIN provisional_identity_claims c ON c.trustchain_id = $1
				 AND c.app_public_signature_key = p.app AND c.tanker_public_signature_key = p.tanker
				UNION ALL
				SELECT p.resource_id, NULL, t.target, t.hashed_value FROM provs p
				JOIN tanker_provisional_keys t ON t.trustchain_id = $1
				 AND t.app_public_signature_key = p.app AND t.tanker_public_signature_key = p.tanker
				WHERE NOT EXISTS (SELECT 1 FROM provisional_identity_claims c WHERE c.trustchain_id = $1
				 AND c.app_public_signature_key = p.app AND c.tanker_public_signature_key = p.tanker)
			) h WHERE user_id IS NOT NULL OR hashed IS NOT NULL
		) d
	) r WHERE n <= $3
	ORDER BY resource_id, n`

// MaxHolders is the most holders AuditKeys lists for one ID, users and provisional identities
// together (users first, by user ID): a key published to a group of thousands would otherwise
// make an answer of megabytes per key.
const MaxHolders = 20

// AuditKeys answers, for each ID, whether imported material reaches a key published under it
// and, for those it does not, who holds one (KeyAudit). Two statements for the whole list: it
// reads rows, it opens no key. Errors wrap ErrUnavailable when the database does not answer.
func (db *DB) AuditKeys(ctx context.Context, ids []encryption.SimpleID) ([]KeyAudit, error) {
	out := make([]KeyAudit, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	index := make(map[encryption.SimpleID][]int, len(ids))
	args := make([][]byte, 0, len(ids))
	for i, id := range ids {
		if _, ok := index[id]; !ok {
			args = append(args, id[:])
		}
		index[id] = append(index[id], i)
	}
	rows, err := db.pool.Query(ctx, reachableSQL, db.appID, args)
	if err != nil {
		return nil, dbError(ctx, "audit keys", err)
	}
	reached, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, dbError(ctx, "audit keys", err)
	}
	for _, r := range reached {
		for _, i := range index[simpleID(r)] {
			out[i].Reachable = true
		}
	}
	var missing [][]byte
	for _, a := range args {
		if !out[index[simpleID(a)][0]].Reachable {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	rows, err = db.pool.Query(ctx, holdersSQL, db.appID, missing, MaxHolders)
	if err != nil {
		return nil, dbError(ctx, "audit key holders", err)
	}
	type holder struct {
		ID     []byte
		User   []byte
		Target *string
		Hashed []byte
	}
	holders, err := pgx.CollectRows(rows, pgx.RowToStructByPos[holder])
	if err != nil {
		return nil, dbError(ctx, "audit key holders", err)
	}
	for _, h := range holders {
		for _, i := range index[simpleID(h.ID)] {
			if h.User != nil {
				out[i].Holders = append(out[i].Holders, h.User)
			} else if h.Target != nil {
				out[i].Provisional = append(out[i].Provisional, ProvisionalHolder{Target: *h.Target, HashedValue: h.Hashed})
			}
		}
	}
	return out, nil
}

func simpleID(b []byte) encryption.SimpleID {
	var id encryption.SimpleID
	copy(id[:], b)
	return id
}
