package identity

import (
	"crypto/ed25519"
	crand "crypto/rand"
	"testing"

	"golang.org/x/crypto/curve25519"
)

// The benchmarks share one file so that they are measured in the same run;
// BenchmarkEd25519Sign is the baseline (one raw signature of 64 bytes, the
// size of a delegation payload).

func BenchmarkCreatePermanent(b *testing.B) {
	appID, appSecret, _ := vecApp(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CreatePermanent(appID, appSecret, vecUserID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateProvisional(b *testing.B) {
	appID, _, _ := vecApp(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CreateProvisional(appID, TargetEmail, vecEmail); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPublicIdentity(b *testing.B) {
	for _, bc := range []struct{ name, identity string }{
		{"permanent", vecPermanent},
		{"provisional_email", vecProvisionalEmail},
		{"provisional_phone", vecProvisionalPhone},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PublicIdentity(bc.identity); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParsePermanent(b *testing.B) {
	appID, _, appPublicKey := vecApp(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParsePermanent(vecPermanent, appID, appPublicKey); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpgrade(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Upgrade(vecOldPermanent); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEd25519Sign(b *testing.B) {
	_, appSecret, _ := vecApp(b)
	priv := ed25519.PrivateKey(appSecret)
	msg := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		ed25519.Sign(priv, msg)
	}
}

// BenchmarkIssuerCreatePermanent is what a server pays per new permanent identity: the app
// checked once, the public identity built beside the secret one (compare with
// BenchmarkCreatePermanent followed by BenchmarkPublicIdentity/permanent).
func BenchmarkIssuerCreatePermanent(b *testing.B) {
	appID, appSecret, _ := vecApp(b)
	is, err := NewIssuer(appID, appSecret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := is.CreatePermanent(vecUserID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateProvisionalPair is what a server pays per new provisional identity, its
// public identity included.
func BenchmarkCreateProvisionalPair(b *testing.B) {
	appID, _, _ := vecApp(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := CreateProvisionalPair(appID, TargetEmail, vecEmail, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkX25519Base compares, in one run, the public key of an X25519 private key computed
// with the Montgomery ladder (curve25519.X25519 with the base point: the baseline) and with
// X25519Base (Edwards25519's fixed-base table).
func BenchmarkX25519Base(b *testing.B) {
	scalar := make([]byte, EncryptionKeySize)
	if _, err := crand.Read(scalar); err != nil {
		b.Fatal(err)
	}
	b.Run("ladder", func(b *testing.B) {
		for b.Loop() {
			if _, err := curve25519.X25519(scalar, curve25519.Basepoint); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			if _, err := X25519Base(scalar); err != nil {
				b.Fatal(err)
			}
		}
	})
}
