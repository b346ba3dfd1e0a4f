// Package loopback decides whether a host names this machine only. It is the one check behind
// every "only on loopback" rule of idvault: the listen addresses of idvault serve (console on by
// default, fake authentication and the identity server without a token refused elsewhere) and of
// idvault exit serve (no token needed), http:// OpenID issuers, and SMTP AUTH over an
// unencrypted connection.
//
// It lives in a package of its own, at the root of the module and importing only the standard
// library, because mail/ must import no app/ package and app/ needs the same answer: the
// dependency rule (.ci/depcheck) lets mail/ import this package and nothing else of idvault, and
// checks that this package stays on the standard library. Keeping the function in mail/ and
// having the HTTP layers import the SMTP package for it would have tied unrelated code to
// go-mail; a copy in each place is how the three checks came to disagree.
package loopback
