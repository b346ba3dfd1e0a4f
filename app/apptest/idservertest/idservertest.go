// Package idservertest holds what the identity server's tests (app/idserver) share with
// app/e2e's runs of the real binary: the body of POST /identity and the app token and OIDC
// audience the tests configure.
package idservertest

const (
	// AppToken is the identity server's app token (identity_server.token) in the tests.
	AppToken = "the-app-token-of-32-characters-x"
	// Audience is the OIDC audience (the client ID) the tests' ID tokens carry.
	Audience = "idvault-test-client"
)

// Record is the body of POST /identity.
type Record struct {
	ID                  string  `json:"id"`
	ServiceIdentity     string  `json:"serviceIdentity"`
	TankerIdentity      string  `json:"tankerIdentity"`
	ProvisionalIdentity *string `json:"provisionalIdentity"`
	Registered          bool    `json:"registered"`
}

// Provisional is the record's provisional identity, "" when it has none.
func (r Record) Provisional() string {
	if r.ProvisionalIdentity == nil {
		return ""
	}
	return *r.ProvisionalIdentity
}
