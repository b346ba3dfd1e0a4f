// Package keys implements the key containers of the Tanker key hierarchy
// (exit/FORMATS.md, "Sealed keys and the verification key"): libsodium-compatible
// sealed boxes, sealed symmetric and private keys, two-times sealed keys
// for provisional identities, the provisional identity claim's sealed key
// pair, and the verification key with its format-2 encryption under a
// user secret.
//
// Sealed boxes are crypto_box_seal: an ephemeral X25519 public key, then
// the crypto_box ciphertext and MAC, with nonce H_24(epk || recipient pk).
// A two-times sealed key is sealed for the app provisional key first and
// the result for the Tanker provisional key; it is opened with the Tanker
// half first, then the app half.
//
// Errors wrap ErrInvalidLength or ErrOpenFailed, and never carry key
// material.
package keys
