// Package identity creates, parses, derives and upgrades Tanker identities,
// byte-compatible with TankerHQ/identity-go v3.
//
// The format is described in app/identity/FORMAT.md.
//
// Identities are base64 (standard alphabet, padded) of compact UTF-8 JSON
// whose keys follow a canonical order (trustchain_id, target, value,
// delegation_signature, ephemeral_public_signature_key,
// ephemeral_private_signature_key, user_secret, public_encryption_key,
// private_encryption_key, public_signature_key, private_signature_key; any
// other key first), with encoding/json's HTML-safe escaping.
//
// Two layers are offered:
//
//   - a byte-level API (GenerateApp, CheckApp, CreatePermanent,
//     CreateProvisional, PublicIdentity, Upgrade, ParsePermanent,
//     ParseProvisional, HashUserID, HashEmail, ...) whose errors are wrapped
//     with the operation name;
//   - an identity-go-compatible layer taking base64 configuration (Config,
//     Create, CreateProvisionalIdentity, GetPublicIdentity, UpgradeIdentity)
//     whose error texts are identity-go's.
//
// All errors can be tested with errors.Is against the Err* sentinels, and no
// error ever contains secret material (app secret, private keys, user
// secrets, whole secret identities).
//
// Deliberate deviations from identity-go, all documented where they apply:
// the AppSecret is never echoed in a decode error; an app secret whose seed
// does not derive its public half is rejected; randomness failures return
// errors; inputs on which identity-go panics (a non-string value or target in
// UpgradeIdentity, a JSON null document, a non-string private_signature_key
// in GetPublicIdentity) return errors or pass through instead.
//
// The package is a pure library: no I/O besides the random source, no
// logging, no package-level mutable state.
package identity
