package dump_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
	"github.com/idvault/idvault/exit/pgtest"
)

// TestDumpLoadsAndEveryRowAgreesWithItsBlock generates a small dump with decoy apps, loads
// it into a real PostgreSQL and checks it the way a reader of exit/dump/FORMAT.md would.
func TestDumpLoadsAndEveryRowAgreesWithItsBlock(t *testing.T) {
	d := dumptest.Shared(t)
	dir, sum := d.Dir, d.Summary
	dsn := pgtest.NewDB(t)
	ctx := context.Background()
	var progressCalls int
	loaded, err := dump.Load(ctx, dsn, dir, func(string, int64, int64) { progressCalls++ })
	require.NoError(t, err)
	require.Equal(t, []string{dump.SchemaFile, dump.DataFile, dump.IndexesFile}, loaded.Files)
	require.Positive(t, progressCalls)
	conn := connect(t, dsn)

	counts := tableCounts(t, conn)
	for tbl, n := range counts {
		require.Equal(t, sum.Rows[tbl], n, "rows of %s", tbl)
		require.Positive(t, n, "table %s is empty", tbl)
	}
	require.Equal(t, int64(sumValues(sum.Rows)), loaded.CopyRows)
	require.Equal(t, 3, counts["trustchains"], "main app and two decoys")
	for _, nature := range []int{8, 11, 13} {
		require.Positive(t, sum.Natures[nature], "no key publish of nature %d", nature)
	}

	v := newVerifier(t, conn)
	v.trustchains()
	v.devices()
	v.users(dir)
	v.groups()
	v.keyPublishes()
	v.claims()
	v.tankerKeys()
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

type verifier struct {
	t    *testing.T
	conn *pgx.Conn
	// public signature key of every device, by trustchain and device ID
	devSig map[[2][32]byte][]byte
	apps   map[[32]byte][]byte // app public key by app ID
}

func newVerifier(t *testing.T, conn *pgx.Conn) *verifier {
	return &verifier{t: t, conn: conn, devSig: map[[2][32]byte][]byte{}, apps: map[[32]byte][]byte{}}
}

func (v *verifier) rows(sql string) pgx.Rows {
	rows, err := v.conn.Query(context.Background(), sql)
	require.NoError(v.t, err)
	return rows
}

// parse parses a block, checks its trustchain and hash, and returns it with its action.
func (v *verifier) parse(raw, trustchain []byte) (*block.Block, block.Action) {
	b, err := block.Parse(raw)
	require.NoError(v.t, err)
	require.Equal(v.t, trustchain, b.TrustchainID[:], "block of another trustchain")
	a, err := b.Action()
	require.NoError(v.t, err)
	return b, a
}

func (v *verifier) authorKey(tc []byte, author block.Hash) []byte {
	k, ok := v.devSig[[2][32]byte{[32]byte(tc), author}]
	require.True(v.t, ok, "author %x is no device of its trustchain", author[:4])
	return k
}

func (v *verifier) trustchains() {
	rows := v.rows("SELECT id, public_signature_key, root_block FROM trustchains")
	defer rows.Close()
	for rows.Next() {
		var id, pub, raw []byte
		require.NoError(v.t, rows.Scan(&id, &pub, &raw))
		b, a := v.parse(raw, id)
		require.Equal(v.t, block.TrustchainCreation, b.Nature)
		h := b.Hash()
		require.Equal(v.t, id, h[:], "app ID is not the root block hash")
		require.Equal(v.t, pub, a.(*block.TrustchainCreationAction).PublicSignatureKey[:])
		appID, err := identity.AppIDFromSecret(append(make([]byte, 32), pub...))
		require.NoError(v.t, err)
		require.Equal(v.t, id, appID, "app ID differs from the identity library's")
		v.apps[[32]byte(id)] = pub
	}
	require.NoError(v.t, rows.Err())
}

func (v *verifier) devices() {
	// Ghost devices first: physical devices are delegated by them.
	rows := v.rows("SELECT trustchain_id, device_id, user_id, is_ghost_device, public_signature_key, public_encryption_key, " +
		"user_public_encryption_key, sealed_user_private_encryption_key, block FROM devices ORDER BY is_ghost_device DESC")
	defer rows.Close()
	ghosts := 0
	for rows.Next() {
		var tc, id, user, sig, enc, userPub, sealed, raw []byte
		var ghost bool
		require.NoError(v.t, rows.Scan(&tc, &id, &user, &ghost, &sig, &enc, &userPub, &sealed, &raw))
		b, act := v.parse(raw, tc)
		d := act.(*block.DeviceCreationAction)
		h := b.Hash()
		require.Equal(v.t, id, h[:], "device_id is not the block hash")
		require.Equal(v.t, block.DeviceCreationV3, b.Nature)
		require.Equal(v.t, user, d.UserID[:])
		require.Equal(v.t, ghost, d.IsGhostDevice)
		require.Equal(v.t, sig, d.PublicSignatureKey[:])
		require.Equal(v.t, enc, d.PublicEncryptionKey[:])
		require.Equal(v.t, userPub, d.UserPublicEncryptionKey[:])
		require.Equal(v.t, sealed, d.SealedUserPrivateEncryptionKey[:])
		require.NoError(v.t, b.VerifySignature(d.EphemeralPublicSignatureKey[:]), "device block signature")
		delegated := append(append([]byte{}, d.EphemeralPublicSignatureKey[:]...), d.UserID[:]...)
		if ghost {
			ghosts++
			require.Equal(v.t, tc, b.Author[:], "a ghost device is authored by the trustchain")
			require.True(v.t, ed25519.Verify(v.apps[[32]byte(tc)], delegated, d.DelegationSignature[:]), "ghost delegation by the app key")
		} else {
			require.True(v.t, ed25519.Verify(v.authorKey(tc, b.Author), delegated, d.DelegationSignature[:]), "device delegation by the ghost device")
		}
		v.devSig[[2][32]byte{[32]byte(tc), h}] = sig
	}
	require.NoError(v.t, rows.Err())
	require.Positive(v.t, ghosts)
}

// users checks every main-app user's encrypted verification key with the user secret of its
// identity: it must open to the keys of that user's ghost device.
func (v *verifier) users(dir string) {
	ctx := context.Background()
	app := readApp(v.t, dir)
	appPub := v.apps[[32]byte(app.ID)]
	checked := 0
	lines, err := dump.ReadIdentities(dir)
	require.NoError(v.t, err)
	for _, line := range lines {
		p, err := identity.ParsePermanent(line.Identity, app.ID, appPub)
		if err != nil {
			_, perr := identity.ParseProvisional(line.Identity, app.ID)
			require.NoError(v.t, perr, "identity of %s is neither permanent nor provisional of the app", line.Email)
			continue
		}
		require.NoError(v.t, p.CheckUserID(line.Email))
		var enc []byte
		require.NoError(v.t, v.conn.QueryRow(ctx, "SELECT encrypted_verification_key_for_user_secret FROM users WHERE trustchain_id = $1 AND user_id = $2",
			app.ID, p.UserID).Scan(&enc))
		vk, err := keys.DecryptVerificationKey(enc, p.UserSecret)
		require.NoError(v.t, err)
		var ghostEnc []byte
		require.NoError(v.t, v.conn.QueryRow(ctx, "SELECT public_encryption_key FROM devices WHERE trustchain_id = $1 AND user_id = $2 AND is_ghost_device AND public_signature_key = $3",
			app.ID, p.UserID, []byte(vk.PublicSignatureKey())).Scan(&ghostEnc))
		kp, err := vk.EncryptionKeyPair()
		require.NoError(v.t, err)
		require.Equal(v.t, ghostEnc, kp.Public[:])
		checked++
	}
	var users int
	require.NoError(v.t, v.conn.QueryRow(ctx, "SELECT count(*) FROM users WHERE trustchain_id = $1", app.ID).Scan(&users))
	require.Equal(v.t, users, checked, "every main-app user has its identity in identities.jsonl")
}

func (v *verifier) groups() {
	type groupKey [2][32]byte
	encOf := map[groupKey][32]byte{}
	members := map[string]bool{}
	provMembers := map[string]bool{}
	rows := v.rows("SELECT trustchain_id, group_id, public_encryption_key, nature, block FROM user_groups ORDER BY created_at")
	natures := map[int16]bool{}
	for rows.Next() {
		var tc, gid, enc, raw []byte
		var nature int16
		require.NoError(v.t, rows.Scan(&tc, &gid, &enc, &nature, &raw))
		b, act := v.parse(raw, tc)
		require.Equal(v.t, int16(b.Nature), nature)
		natures[nature] = true
		require.NoError(v.t, b.VerifySignature(v.authorKey(tc, b.Author)), "group block signature by its author device")
		var ms []block.GroupMember
		var ps []block.GroupProvisionalMember
		switch a := act.(type) {
		case *block.UserGroupCreationAction:
			require.Equal(v.t, gid, a.PublicSignatureKey[:])
			require.Equal(v.t, enc, a.PublicEncryptionKey[:])
			require.NoError(v.t, a.VerifySelfSignature())
			encOf[groupKey{[32]byte(tc), [32]byte(gid)}] = a.PublicEncryptionKey
			ms, ps = a.Members, a.ProvisionalMembers
		case *block.UserGroupAdditionAction:
			require.Equal(v.t, gid, a.GroupID[:])
			want, ok := encOf[groupKey{[32]byte(tc), [32]byte(gid)}]
			require.True(v.t, ok, "addition before its group's creation")
			require.Equal(v.t, want[:], enc, "an addition row carries its group's encryption key")
			require.NoError(v.t, a.VerifySelfSignature())
			ms, ps = a.Members, a.ProvisionalMembers
		default:
			v.t.Fatalf("user_groups row of nature %d", nature)
		}
		for _, m := range ms {
			uid := m.UserID[:]
			if b.Nature == block.UserGroupCreationV1 || b.Nature == block.UserGroupAdditionV1 {
				uid = nil
			}
			members[hex.EncodeToString(bytes.Join([][]byte{tc, gid, uid, m.UserPublicEncryptionKey[:], m.SealedPrivateEncryptionKey[:]}, []byte{'|'}))] = true
		}
		for _, p := range ps {
			provMembers[hex.EncodeToString(bytes.Join([][]byte{tc, gid, p.AppPublicSignatureKey[:], p.TankerPublicSignatureKey[:], p.TwoTimesSealedPrivateEncryptionKey[:]}, []byte{'|'}))] = true
		}
	}
	require.NoError(v.t, rows.Err())
	rows.Close()
	for _, n := range []int16{10, 12, 15, 16, 17, 18} {
		require.True(v.t, natures[n], "no group block of nature %d", n)
	}

	seen := 0
	rows = v.rows("SELECT trustchain_id, group_id, user_id, user_public_encryption_key, sealed_group_private_encryption_key FROM user_group_members")
	for rows.Next() {
		var tc, gid, uid, pub, sealed []byte
		require.NoError(v.t, rows.Scan(&tc, &gid, &uid, &pub, &sealed))
		k := hex.EncodeToString(bytes.Join([][]byte{tc, gid, uid, pub, sealed}, []byte{'|'}))
		require.True(v.t, members[k], "user_group_members row without its block entry")
		delete(members, k)
		seen++
	}
	require.NoError(v.t, rows.Err())
	rows.Close()
	require.Empty(v.t, members, "block member entries without a user_group_members row")
	require.Positive(v.t, seen)

	rows = v.rows("SELECT trustchain_id, group_id, app_public_signature_key, tanker_public_signature_key, two_times_sealed_group_private_encryption_key FROM user_group_provisional_members")
	for rows.Next() {
		var tc, gid, app, tk, sealed []byte
		require.NoError(v.t, rows.Scan(&tc, &gid, &app, &tk, &sealed))
		k := hex.EncodeToString(bytes.Join([][]byte{tc, gid, app, tk, sealed}, []byte{'|'}))
		require.True(v.t, provMembers[k], "user_group_provisional_members row without its block entry")
		delete(provMembers, k)
	}
	require.NoError(v.t, rows.Err())
	rows.Close()
	require.Empty(v.t, provMembers)
}

func (v *verifier) keyPublishes() {
	rows := v.rows("SELECT trustchain_id, resource_id, nature, recipient, sealed_key, author, block FROM key_publishes")
	defer rows.Close()
	for rows.Next() {
		var tc, rid, recipient, sealed, author, raw []byte
		var nature int16
		require.NoError(v.t, rows.Scan(&tc, &rid, &nature, &recipient, &sealed, &author, &raw))
		b, act := v.parse(raw, tc)
		require.Equal(v.t, int16(b.Nature), nature)
		require.Equal(v.t, author, b.Author[:])
		require.NoError(v.t, b.VerifySignature(v.authorKey(tc, b.Author)), "key publish signature by its author device")
		switch a := act.(type) {
		case *block.KeyPublishAction:
			require.Equal(v.t, rid, a.ResourceID[:])
			require.Equal(v.t, recipient, a.Recipient[:])
			require.Equal(v.t, sealed, a.SealedKey[:])
		case *block.KeyPublishToProvisionalUserAction:
			require.Equal(v.t, rid, a.ResourceID[:])
			require.Equal(v.t, recipient, append(append([]byte{}, a.AppPublicSignatureKey[:]...), a.TankerPublicSignatureKey[:]...))
			require.Equal(v.t, sealed, a.TwoTimesSealedKey[:])
		default:
			v.t.Fatalf("key_publishes row of nature %d", nature)
		}
	}
	require.NoError(v.t, rows.Err())
}

func (v *verifier) claims() {
	rows := v.rows("SELECT trustchain_id, user_id, app_public_signature_key, tanker_public_signature_key, user_public_encryption_key, sealed_private_encryption_keys, block FROM provisional_identity_claims")
	defer rows.Close()
	n := 0
	for rows.Next() {
		var tc, uid, app, tk, upub, sealed, raw []byte
		require.NoError(v.t, rows.Scan(&tc, &uid, &app, &tk, &upub, &sealed, &raw))
		b, act := v.parse(raw, tc)
		a := act.(*block.ProvisionalIdentityClaimAction)
		require.Equal(v.t, uid, a.UserID[:])
		require.Equal(v.t, app, a.AppPublicSignatureKey[:])
		require.Equal(v.t, tk, a.TankerPublicSignatureKey[:])
		require.Equal(v.t, upub, a.UserPublicEncryptionKey[:])
		require.Equal(v.t, sealed, a.SealedPrivateEncryptionKeys[:])
		require.NoError(v.t, a.VerifyAuthorSignatures(b.Author))
		require.NoError(v.t, b.VerifySignature(v.authorKey(tc, b.Author)))
		n++
	}
	require.NoError(v.t, rows.Err())
	require.Positive(v.t, n)
}

func (v *verifier) tankerKeys() {
	rows := v.rows("SELECT target, tanker_public_signature_key, tanker_public_encryption_key, tanker_private_signature_key, tanker_private_encryption_key FROM tanker_provisional_keys")
	defer rows.Close()
	for rows.Next() {
		var target string
		var sigPub, encPub, sigPriv, encPriv []byte
		require.NoError(v.t, rows.Scan(&target, &sigPub, &encPub, &sigPriv, &encPriv))
		require.Contains(v.t, []string{"email", "phone_number"}, target)
		require.Equal(v.t, sigPub, []byte(ed25519.PrivateKey(sigPriv).Public().(ed25519.PublicKey)))
		kp, err := keys.EncryptionKeyPairFromPrivate(encPriv)
		require.NoError(v.t, err)
		require.Equal(v.t, encPub, kp.Public[:])
	}
	require.NoError(v.t, rows.Err())
}

// TestManifestMatchesTheCiphertexts checks every manifest entry against the key the
// generator used: ok entries decrypt to their SHA-256, negative ones fail as announced.
func TestManifestMatchesTheCiphertexts(t *testing.T) {
	d := dumptest.Shared(t)
	dir, sum, entries := d.Dir, d.Summary, d.Manifest
	keyLines, err := dump.ReadKeys(dir)
	require.NoError(t, err)
	require.Len(t, keyLines, len(entries))
	require.Equal(t, sum.Resources+sum.Negatives, len(entries))

	formats := map[int]bool{}
	cases := map[string]bool{}
	var multiChunk, empty, big bool
	for i, e := range entries {
		require.Equal(t, e.File, keyLines[i].File)
		key := dumptest.Base64(t, keyLines[i].Key)
		ct, err := os.ReadFile(filepath.Join(dir, e.File))
		require.NoError(t, err)
		clear, derr := dump.DecryptWithDataKey(key, ct)
		switch e.Expected {
		case dump.ExpectOK:
			require.NoError(t, derr, e.File)
			sum := sha256.Sum256(clear)
			require.Equal(t, e.SHA256, hex.EncodeToString(sum[:]), e.File)
			require.Equal(t, e.ClearSize, int64(len(clear)))
			require.NotEmpty(t, e.Creator)
			v, rid, err := encryption.ExtractResourceID(ct)
			require.NoError(t, err)
			require.Equal(t, e.Format, int(v))
			require.Equal(t, e.ResourceID, rid.String())
			formats[e.Format] = true
			empty = empty || len(clear) == 0
			multiChunk = multiChunk || (v.IsStream() && len(ct) > 2*1024 && len(clear) > 0 && isMultiChunk(ct))
			big = big || len(clear) > 2<<20
		case dump.ExpectDecryptionFailed:
			require.Error(t, derr, e.File)
			if e.Case == "tampered" {
				require.ErrorIs(t, derr, encryption.ErrDecryptionFailed, e.File)
			} else {
				// A stream cut before its final chunk: the exit server answers
				// decryption_failed, not truncated_data.
				require.ErrorIs(t, derr, encryption.ErrIncompleteStream, e.File)
				require.ErrorIs(t, derr, encryption.ErrDecryptionFailed, e.File)
				require.NotErrorIs(t, derr, encryption.ErrTruncated, e.File)
			}
		case dump.ExpectTruncatedData:
			_, _, err := encryption.ExtractResourceID(ct)
			require.ErrorIs(t, err, encryption.ErrTruncated, e.File)
		case dump.ExpectUnsupportedFormat:
			_, _, err := encryption.ExtractResourceID(ct)
			require.ErrorIs(t, err, encryption.ErrUnknownFormat, e.File)
		case dump.ExpectKeyNotFound:
			// The ciphertext itself is fine; its key is published where no imported
			// identity reaches (checked against the database in TestKeyNotFoundCases).
			require.NoError(t, derr, e.File)
		default:
			t.Fatalf("%s: unknown expected outcome %q", e.File, e.Expected)
		}
		cases[e.Case] = true
	}
	for v := 2; v <= 11; v++ {
		require.True(t, formats[v], "no ok ciphertext of format %d", v)
	}
	require.True(t, empty, "no empty resource")
	require.True(t, multiChunk, "no multi-chunk stream")
	require.True(t, big, "no big resource")
	for _, c := range []string{"tampered", "truncated", "stream_cut_before_final_chunk", "unknown_format_12",
		"key_published_to_nobody", "key_only_for_withheld_provisional_identity", "key_only_in_decoy_app"} {
		require.True(t, cases[c], "no negative case %s", c)
	}
}

// isMultiChunk reports whether a v4/v8 stream has more than one chunk header, or a v11
// stream is longer than its declared chunk size.
func isMultiChunk(ct []byte) bool {
	switch ct[0] {
	case 4, 8:
		size := int(ct[1]) | int(ct[2])<<8 | int(ct[3])<<16 | int(ct[4])<<24
		return len(ct) > size
	case 11:
		size := int(ct[33]) | int(ct[34])<<8 | int(ct[35])<<16 | int(ct[36])<<24
		return len(ct)-37 > size
	}
	return false
}
