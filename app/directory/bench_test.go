package directory_test

import (
	"fmt"
	"testing"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/directory"
)

// BenchmarkPublicIdentities is the directory's share of public_identities with 100 known
// emails (no HTTP).
func BenchmarkPublicIdentities(b *testing.B) {
	env := apptest.New(b)
	a := env.CreateApp(b, true).App
	emails := make([]string, 100)
	for i := range emails {
		emails[i] = fmt.Sprintf("u%d@example.com", i)
		if _, err := env.Dir.Permanent(a, emails[i]); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := env.Dir.PublicIdentities(a, emails, directory.FakeAuthPolicy); err != nil {
			b.Fatal(err)
		}
	}
}
