// Package loopback decides whether a host names this machine only. It is the one check behind
// every "only on loopback" rule of idvault: the listen addresses of idvault serve (console on by
// default, fake authentication and the identity server without a token refused elsewhere) and of
// idvault exit serve (no token needed), http:// OpenID issuers, and SMTP AUTH over an
// unencrypted connection.
//
// It lives in a package of its own under app/ (the top level holds only app/, store/, mail/ and
// exit/), importing only the standard library, because mail/ needs the same answer as app/: the
// dependency rule (.ci/depcheck) lets mail/ import this package and nothing else of idvault, and
// checks that this package stays on the standard library. Keeping the function in mail/ and
// having the HTTP layers import the SMTP package for it would have tied unrelated code to
// go-mail; a copy in each place is how the three checks came to disagree.
package loopback
