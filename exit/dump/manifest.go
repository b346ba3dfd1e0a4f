package dump

import "github.com/idvault/idvault/exit/encryption"

// SumsFile lists the SHA-256 of every clear file a decrypt of data/ must give, in the format
// `sha256sum -c` reads, with paths relative to the directory decrypt writes (its --out).
const SumsFile = "SHA256SUMS"

// ProvisionalOnlyName starts the names of the files under data/ whose key only a provisional
// identity nobody claimed holds (gen.Options.ProvisionalOnly).
const ProvisionalOnlyName = "prov-only"

// AppInfo is the content of app.json.
type AppInfo struct {
	AppID       string   `json:"app_id"`
	AppSecret   string   `json:"app_secret"`
	DecoyAppIDs []string `json:"decoy_app_ids"`
}

// KeysFile is the optional list of the keys the generator used (gen.Options.WriteKeys).
const KeysFile = "resource_keys.jsonl"

// Expected outcomes in the manifest: ok, or the error code the exit server must answer.
const (
	ExpectOK                = "ok"
	ExpectDecryptionFailed  = "decryption_failed"
	ExpectTruncatedData     = "truncated_data"
	ExpectUnsupportedFormat = "unsupported_format"
	ExpectKeyNotFound       = "key_not_found"
)

// ManifestEntry is one line of manifest.jsonl.
type ManifestEntry struct {
	// File is the ciphertext's path relative to the dump directory.
	File string `json:"file"`
	// Format is the first byte of the ciphertext (an unknown one for unsupported_format).
	Format int `json:"format"`
	// ResourceID is the standard base64 of the resource ID (16 bytes, or 33 for formats 9
	// to 11); empty when the ciphertext has none (truncated, unknown format).
	ResourceID string `json:"resource_id,omitempty"`
	// ClearSize and SHA256 (hex) describe the clear bytes.
	ClearSize int64  `json:"clear_size"`
	SHA256    string `json:"sha256"`
	// Creator is the email of the user who created the resource ("" when no user of the app
	// did).
	Creator string `json:"creator"`
	// Expected is "ok" or the error code a decrypt must give.
	Expected string `json:"expected"`
	// Case says what a negative case is ("tampered", "truncated", ...); empty for ok.
	Case string `json:"case,omitempty"`
}

// KeyEntry is one line of resource_keys.jsonl: the AEAD key of a manifest file (for formats
// 9 to 11 the derived subkey).
type KeyEntry struct {
	File string `json:"file"`
	Key  string `json:"key"`
}

// DecryptWithDataKey decrypts ct with the AEAD key a KeyEntry holds. For
// formats 9 to 11 that is the data key H_32(sessionKey || seed), which the
// exit library takes the way a key published under the seed is found
// (encryption.DecryptWithKey takes the session key, like Encrypt).
func DecryptWithDataKey(key, ct []byte) ([]byte, error) {
	v, rid, err := encryption.ExtractResourceID(ct)
	if err != nil || !v.IsTransparentSession() {
		return encryption.DecryptWithKey(key, ct)
	}
	out, _, err := encryption.Decrypt(encryption.KeyMap{rid.Seed: key}, ct)
	return out, err
}
