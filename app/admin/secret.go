package admin

import "encoding/base64"

// secretText is the app secret as the Tanker dashboard shows it: standard base64.
func secretText(secret []byte) string { return base64.StdEncoding.EncodeToString(secret) }
