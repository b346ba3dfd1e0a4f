// Package dumptest gives tests of the exit tool a generated dump loaded into a throwaway
// PostgreSQL database (exit/pgtest), with its manifest and identities at hand.
package dumptest

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// Dump is a generated dump and, once Load is called, the database holding it.
type Dump struct {
	// Dir holds the dump's files (shared by the tests of a binary: read only).
	Dir        string
	App        dump.App
	Summary    gen.Summary
	Manifest   []dump.ManifestEntry
	Identities []dump.IdentityLine
}

// Small are the options of Shared: every nature, format and negative case, resources only an
// unclaimed provisional identity opens, two decoy apps, one big (multi-MiB) ciphertext, and
// the generator's keys file, in about a second.
var Small = gen.Options{Users: 24, Groups: 9, Resources: 90, ProvisionalOnly: 4, DecoyApps: 2, Big: 1, Seed: 7, WriteKeys: true}

var (
	sharedOnce sync.Once
	shared     *Dump
	sharedErr  error
)

// Shared returns the Small dump, generated once per test binary in a directory of the system
// temp directory (idvault-dumptest-*). Call Cleanup from TestMain to remove it at the end.
func Shared(tb testing.TB) *Dump {
	tb.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idvault-dumptest-")
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = generate(filepath.Join(dir, "dump"), Small)
	})
	if sharedErr != nil {
		tb.Fatalf("dumptest: %v", sharedErr)
	}
	return shared
}

// New generates a dump with opts into a directory of the test.
func New(tb testing.TB, opts gen.Options) *Dump {
	tb.Helper()
	d, err := generate(filepath.Join(tb.TempDir(), "dump"), opts)
	if err != nil {
		tb.Fatalf("dumptest: %v", err)
	}
	return d
}

func generate(dir string, opts gen.Options) (*Dump, error) {
	sum, err := gen.Generate(context.Background(), dir, opts)
	if err != nil {
		return nil, err
	}
	d := &Dump{Dir: dir, Summary: sum}
	if d.App, err = dump.ReadApp(dir); err != nil {
		return nil, err
	}
	if d.Manifest, err = dump.ReadManifest(dir); err != nil {
		return nil, err
	}
	if d.Identities, err = dump.ReadIdentities(dir); err != nil {
		return nil, err
	}
	return d, nil
}

// Load loads the dump into a fresh database of the test cluster and returns its DSN. It
// skips the test without PostgreSQL (fails under IDVAULT_REQUIRE_EXTERNAL=1).
func (d *Dump) Load(tb testing.TB) string {
	tb.Helper()
	dsn := pgtest.NewDB(tb)
	if _, err := dump.Load(context.Background(), dsn, d.Dir, nil); err != nil {
		tb.Fatalf("dumptest: load: %v", err)
	}
	return dsn
}

// File returns the path of a manifest entry's ciphertext.
func (d *Dump) File(e dump.ManifestEntry) string { return filepath.Join(d.Dir, e.File) }

// Base64 decodes s, a standard base64 field of a dump's files (a key, a resource ID), failing tb
// when it is not one.
func Base64(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		tb.Fatalf("dumptest: %v", err)
	}
	return b
}

// Main runs a test binary's tests, then removes the directory of Shared: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Cleanup removes the directory of Shared, if it was made.
func Cleanup() {
	if shared != nil {
		_ = os.RemoveAll(filepath.Dir(shared.Dir))
	}
}
