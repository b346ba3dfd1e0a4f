// Package chain runs the exit tool's key chain (exit/FORMATS.md,
// "The key chain"; the tables of exit/dump/FORMAT.md) over a Source, so that the
// same logic serves the PostgreSQL implementation (exit/exitdb) and the
// in-memory one of the tests.
//
// Importing turns a private identity into Material, the key pairs that
// decrypting needs:
//
//   - a permanent identity (parsed by app/identity, any library's field
//     order): the users row's encrypted verification key opens with the
//     user secret; the ghost device whose public signature key is the
//     verification key's gives the user key pair; the user's provisional
//     identity claims give provisional key pairs (app and tanker halves);
//   - a secret provisional identity: its app half joined with the
//     service-held tanker half of tanker_provisional_keys (the dump is
//     static, so the join is done once, at import; an identity the service
//     holds no half for was never shared with and yields no pair);
//   - for every user key and provisional pair, the group private keys
//     sealed to it in user_group_members and user_group_provisional_members,
//     each checked against the group's public encryption key.
//
// Resolving a 16-byte ID (Chain.FindKey) reads the key publishes of the ID
// and opens the first one whose recipient has imported material: nature 8
// with a user key, nature 11 with a group key, nature 13 with a provisional
// pair (tanker half first, then app half). Otherwise it returns a
// *KeyNotFoundError naming, when the dump tells it, the user who created
// the resource (key_publishes.author -> devices.user_id).
//
// Import failures caused by the identity or by what the dump holds for it
// are *InvalidIdentityError values whose Reason is a sentence with no
// identity and no secret in it; any other error comes from the Source.
//
// Block signatures are not verified: decrypting does not need them
// (exit/FORMATS.md), and a reader of the dump trusts the operator's database.
// Legacy user key rotations (device revocation v2) are not followed: the
// dump's devices table has no revocation rows.
package chain
