package identity

import (
	"encoding/base64"
)

// Config is an app's configuration as identity-go takes it: the app ID and
// app secret as padded standard base64 strings.
type Config struct {
	AppID     string
	AppSecret string
}

// Decode decodes and size-checks the configuration in identity-go's order
// (AppID decode, AppID size, AppSecret decode, AppSecret size). It returns
// *ConfigError; it does not check that the secret matches the ID (CheckApp
// does). Its errors never contain the AppSecret (see ConfigError).
func (c Config) Decode() (appID, appSecret []byte, err error) {
	appID, err = base64.StdEncoding.DecodeString(c.AppID)
	if err != nil {
		return nil, nil, &ConfigError{Field: fieldAppID, NotBase64: true, AppID: c.AppID}
	}
	if len(appID) != AppIDSize {
		return nil, nil, &ConfigError{Field: fieldAppID, Size: len(appID)}
	}
	appSecret, err = base64.StdEncoding.DecodeString(c.AppSecret)
	if err != nil {
		return nil, nil, &ConfigError{Field: fieldAppSecret, NotBase64: true}
	}
	if len(appSecret) != AppSecretSize {
		return nil, nil, &ConfigError{Field: fieldAppSecret, Size: len(appSecret)}
	}
	return appID, appSecret, nil
}

// Create is identity-go's Create: it returns a new b64 secret permanent
// identity for userID. Errors, with identity-go's exact texts and in its order:
// *ConfigError (see its doc for the one deviation: the AppSecret is never
// echoed), then ErrAppMismatch. Beyond identity-go it also rejects a secret
// whose seed does not derive its public half (ErrInvalidAppSecret). Errors
// from crypto/rand are returned (identity-go panics on some).
func Create(cfg Config, userID string) (string, error) {
	appID, appSecret, err := cfg.Decode()
	if err != nil {
		return "", err
	}
	defer clear(appSecret)
	if err := checkAppKeys(appID, appSecret); err != nil {
		return "", err
	}
	return createPermanent(appID, appSecret, userID, nil)
}

// CreateProvisionalIdentity is identity-go's CreateProvisional: it returns a
// new b64 secret provisional identity. Errors in identity-go's order:
// *ConfigError, ErrUnsupportedProvisionalTarget (target not "email" or
// "phone_number"), then ErrAppMismatch (and ErrInvalidAppSecret as for
// Create).
func CreateProvisionalIdentity(cfg Config, target, value string) (string, error) {
	appID, appSecret, err := cfg.Decode()
	if err != nil {
		return "", err
	}
	defer clear(appSecret)
	if !validProvisionalTarget(target) {
		return "", ErrUnsupportedProvisionalTarget
	}
	if err := checkAppKeys(appID, appSecret); err != nil {
		return "", err
	}
	return createProvisional(appID, target, value, nil)
}

// GetPublicIdentity is identity-go's GetPublicIdentity: PublicIdentity with
// errors unwrapped, so their texts are identity-go's exactly
// ("unsupported identity target", "invalid tanker identity", or the raw
// encoding/base64 or encoding/json message).
func GetPublicIdentity(b64Identity string) (string, error) {
	return publicIdentity(b64Identity)
}

// UpgradeIdentity is identity-go's UpgradeIdentity: Upgrade with errors
// unwrapped, so their texts are identity-go's exactly
// ("invalid provisional identity (missing target field)",
// "unsupported identity without value", or the raw encoding/base64 or
// encoding/json message).
func UpgradeIdentity(b64Identity string) (string, error) {
	return upgrade(b64Identity)
}
