package gen

import (
	"fmt"
	"slices"

	"github.com/idvault/idvault/exit/encryption"
)

// Options say what Generate makes. Zero counts take the defaults of DefaultOptions.
type Options struct {
	// Users of the main app; each has a ghost device and one or two physical devices.
	Users int
	// Groups of the main app (creations of natures 10, 15, 17; half get an addition of
	// natures 12, 16, 18).
	Groups int
	// Resources is the number of ordinary ciphertexts (negative cases and Big come on top).
	Resources int
	// Provisional is the number of provisional identities (default Users/4, at least 4):
	// every other one is claimed by a user, one is withheld from identities.jsonl.
	Provisional int
	// Formats cycled through by the resources (default 2 to 11).
	Formats []encryption.Version
	// ProvisionalOnly adds that many resources whose key is published only to a provisional
	// identity nobody claimed (as Tanker's encrypt with shareWithSelf false): importing that
	// identity (it is in identities.jsonl) is the only way to them. Needs at least 3
	// provisional identities.
	ProvisionalOnly int
	// Big adds that many multi-MiB resources (2 to 5 MiB, stream formats, 1 MiB chunks).
	Big int
	// Seed makes the dump: the same seed and options give byte-identical files.
	Seed uint64
	// AppSecret is the main app's 64-byte secret; nil derives one from Seed.
	AppSecret []byte
	// DecoyApps adds that many other apps (trustchains) whose rows must never serve the main
	// app; some of their key publishes reuse main resource IDs with wrong keys.
	DecoyApps int
	// Workers is the number of goroutines making items (default GOMAXPROCS).
	Workers int
	// WriteKeys also writes resource_keys.jsonl: for each manifest entry the AEAD key the
	// generator used. For tests of the dump itself; real dumps never carry it.
	WriteKeys bool
	// Progress, when set, is called as work advances (from one goroutine at a time).
	Progress func(stage string, done, total int64)
}

// DefaultOptions are the sizes used when a count is zero: a dump small enough for a demo.
var DefaultOptions = Options{Users: 20, Groups: 6, Resources: 60}

// AllFormats are the formats the generator can produce (2 to 11).
var AllFormats = []encryption.Version{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

func (o *Options) normalize() error {
	if o.Users < 0 || o.Groups < 0 || o.Resources < 0 || o.Provisional < 0 || o.Big < 0 || o.DecoyApps < 0 || o.ProvisionalOnly < 0 {
		return fmt.Errorf("dump: counts must not be negative")
	}
	if o.Users == 0 {
		o.Users = DefaultOptions.Users
	}
	if o.Groups == 0 {
		o.Groups = min(DefaultOptions.Groups, o.Users)
	}
	if o.Resources == 0 {
		o.Resources = DefaultOptions.Resources
	}
	if o.Provisional == 0 {
		o.Provisional = max(4, o.Users/4)
	}
	if len(o.Formats) == 0 {
		o.Formats = AllFormats
	}
	for _, v := range o.Formats {
		if !slices.Contains(AllFormats, v) {
			return fmt.Errorf("dump: format %d cannot be generated (2 to 11)", v)
		}
	}
	if o.AppSecret != nil && len(o.AppSecret) != 64 {
		return fmt.Errorf("dump: app secret of %d bytes, want 64", len(o.AppSecret))
	}
	return nil
}

// Summary counts what Generate wrote.
type Summary struct {
	AppID      []byte
	DecoyIDs   [][]byte
	Rows       map[string]int // rows per table, every app
	Natures    map[int]int    // key publishes per nature, every app
	Resources  int            // ciphertexts expected to decrypt
	Negatives  int            // ciphertexts expected to fail
	Identities int            // lines of identities.jsonl
}
