package audit

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/app/identity"
)

// Prefixes of the names of holders the audit knows: an email provisional identity in
// Options.Users, and the provisional holders of the server's answer.
const (
	usersEmailPrefix  = identity.TargetEmail + ":"
	provisionalPrefix = "hashed_"
)

// holderName is what the audit knows of one holder (by its user ID or provisional hash).
type holderName struct {
	user string // a line of Options.Users, or the "target:value" of a provisional identity
	line int    // its line in Options.Identities (0 when not there)
}

// isProvisional tells a provisional holder ("hashed_email:<base64>") from a user (the base64
// of a hashed user ID, which never holds a colon).
func isProvisional(holder string) bool { return strings.HasPrefix(holder, provisionalPrefix) }

// holder is the Holder of an item for a holder of the server's answer.
func (a *auditor) holder(h string) Holder {
	n := a.names[h]
	if isProvisional(h) {
		return Holder{Provisional: h, User: n.user, Line: n.line}
	}
	return Holder{UserID: h, User: n.user, Line: n.line}
}

// nameHolders learns the names of the holders once the app's ID is known: each line of
// opts.Users hashed as Tanker hashes user IDs under the app's ID, and an "email:ADDRESS" line
// also as an email provisional identity's public identity carries it; then each identity of
// opts.Identities, by its line, a provisional one also by its email or phone number. A name
// from Users is kept over one from Identities.
func (a *auditor) nameHolders(appID string) error {
	a.names = map[string]holderName{}
	if len(a.opts.Users) == 0 && a.opts.Identities == nil {
		return nil
	}
	id, err := base64.StdEncoding.DecodeString(appID)
	if err != nil || len(id) != 32 {
		return errors.New("audit: the server's app_id is not the base64 of 32 bytes")
	}
	if a.opts.Identities != nil {
		if _, err := exitclient.ScanIdentities(a.opts.Identities, func(v exitclient.Identity) bool {
			if key, user, ok := identityHolder(v.Value, id); ok {
				if _, seen := a.names[key]; !seen { // the first line that holds it
					a.names[key] = holderName{user: user, line: v.Line}
				}
			}
			return true
		}); err != nil {
			return &records.UsageError{Msg: fmt.Sprintf("identities: %v", err)}
		}
	}
	b64 := base64.StdEncoding.EncodeToString
	name := func(key, user string) {
		n := a.names[key]
		n.user = user
		a.names[key] = n
	}
	for _, u := range a.opts.Users {
		name(b64(identity.HashUserID(id, u)), u)
		if email, ok := strings.CutPrefix(u, usersEmailPrefix); ok {
			name(provisionalPrefix+identity.TargetEmail+":"+b64(identity.HashEmail(email)), u)
		}
	}
	return nil
}

// identityHolder is how the audit names the holder a private identity of the app makes: the
// base64 of the hashed user ID of a permanent identity (user empty), or the
// "hashed_TARGET:<base64>" of a provisional one with its "TARGET:VALUE" (the hash is the one
// its public identity carries: for a phone number, salted with its private signature key).
// ok is false for anything else.
func identityHolder(private string, appID []byte) (key, user string, ok bool) {
	if p, err := identity.ParseProvisional(private, appID); err == nil {
		key = provisionalPrefix + p.Target + ":" + base64.StdEncoding.EncodeToString(p.HashedValue())
		user = p.Target + ":" + p.Value
		clear(p.PrivateEncryptionKey)
		clear(p.PrivateSignatureKey)
		return key, user, true
	}
	public, err := identity.PublicIdentity(private)
	if err != nil {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(public)
	if err != nil {
		return "", "", false
	}
	var pub struct {
		Target string `json:"target"`
		Value  string `json:"value"`
	}
	if json.Unmarshal(raw, &pub) != nil || pub.Target != identity.TargetUser {
		return "", "", false
	}
	return pub.Value, "", true
}
