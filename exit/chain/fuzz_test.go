package chain_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/idvault/idvault/exit/chain"
	"github.com/idvault/idvault/exit/chain/chaintest"
)

// FuzzImport feeds arbitrary strings to Import over a small World: it never
// panics, and anything that is not an importable identity is an
// *InvalidIdentityError whose reason does not echo the input.
func FuzzImport(f *testing.F) {
	w := chaintest.NewWorld(f)
	alice := w.User("alice", true)
	p := w.Provisional("fuzz@example.com")
	src := chaintest.NewMemSource(&w.Dump)
	c, err := chain.New(w.AppID, w.AppSecret[32:], src)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(alice.Identity)
	f.Add(p.Identity)
	f.Add("")
	f.Add("e30=") // {}
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"target":"user","trustchain_id":"` +
		base64.StdEncoding.EncodeToString(w.AppID) + `","value":"AAAA"}`)))
	raw, _ := base64.StdEncoding.DecodeString(alice.Identity)
	f.Add(base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"user"`, `"email"`, 1))))
	f.Fuzz(func(t *testing.T, s string) {
		m, err := c.Import(t.Context(), s)
		if err == nil {
			if m == nil || len(m.ID) == 0 {
				t.Fatalf("no material and no error")
			}
			return
		}
		var inv *chain.InvalidIdentityError
		if !errors.As(err, &inv) {
			t.Fatalf("not an InvalidIdentityError: %v", err)
		}
		if len(s) >= 8 && strings.Contains(inv.Reason, s) {
			t.Fatalf("reason echoes the input")
		}
	})
}
