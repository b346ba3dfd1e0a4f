package identity

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitReady waits until the pool holds at least n items (the filler runs in the background);
// bounded, so a filler that never fills fails the test instead of hanging it.
func waitReady(t *testing.T, p *KeyPool, n int) {
	t.Helper()
	for range 20000 {
		if p.Stats().Ready >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the pool holds %d items, want %d", p.Stats().Ready, n)
}

func newTestIssuer(t *testing.T) (*Issuer, []byte) {
	t.Helper()
	appID, appSecret, err := GenerateApp(nil)
	require.NoError(t, err)
	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	return is, appSecret[32:]
}

// Under concurrent creations, every identity the pool hands out is valid and none shares a key,
// a user ID or a user secret with another: nothing is handed out twice, whether it came from
// the pool or was made on the caller's path; with the filler yielding between rounds or not
// (KeyPoolOptions.NoYield).
func TestKeyPoolHandsOutEachIdentityOnce(t *testing.T) {
	t.Parallel()
	for _, o := range []KeyPoolOptions{{}, {NoYield: true}} {
		t.Run(fmt.Sprintf("NoYield=%v", o.NoYield), func(t *testing.T) {
			t.Parallel()
			handsOutEachIdentityOnce(t, o)
		})
	}
}

func handsOutEachIdentityOnce(t *testing.T, o KeyPoolOptions) {
	p := NewKeyPoolWith(8, o)
	t.Cleanup(p.Close)
	is, appPub := newTestIssuer(t)
	appID := is.AppID()
	// Prime both kinds, so that most creations below are served from the pool.
	_, _, _, err := p.NewPermanent(is)
	require.NoError(t, err)
	_, _, err = p.Provisional(appID, TargetEmail, "prime@example.com")
	require.NoError(t, err)
	waitReady(t, p, 3*8)

	const workers, each = 8, 40
	var mu sync.Mutex
	seen := map[string]bool{}
	add := func(kind string, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		k := kind + string(b)
		require.False(t, seen[k], "%s handed out twice", kind)
		seen[k] = true
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				userID, secret, public, err := p.NewPermanent(is)
				require.NoError(t, err)
				perm, err := ParsePermanent(secret, appID, appPub)
				require.NoError(t, err)
				require.NoError(t, perm.CheckUserID(userID))
				derived, err := PublicIdentity(secret)
				require.NoError(t, err)
				require.Equal(t, derived, public)
				add("user id", []byte(userID))
				add("ephemeral key", perm.EphemeralPrivateSignatureKey)
				add("user secret", perm.UserSecret)

				secret, public, err = p.Provisional(appID, TargetEmail, "someone@example.com")
				require.NoError(t, err)
				prov, err := ParseProvisional(secret, appID)
				require.NoError(t, err)
				derived, err = PublicIdentity(secret)
				require.NoError(t, err)
				require.Equal(t, derived, public)
				add("signature key", prov.PrivateSignatureKey)
				add("encryption key", prov.PrivateEncryptionKey)
			}
		})
	}
	wg.Wait()
	st := p.Stats()
	require.Positive(t, st.Taken, "some creations were served from the pool")
	require.Equal(t, int64(2*workers*each+2), st.Taken+st.Missed, "every creation counted once")
}

// Close wipes the private keys and secret identities the pool still holds, and a closed pool
// hands out nothing: creations make their own keys.
func TestKeyPoolCloseWipesWhatItHolds(t *testing.T) {
	t.Parallel()
	p := NewKeyPool(4)
	is, _ := newTestIssuer(t)
	// Fill the pool by hand (no creation has started the filler), keeping references.
	sig, err := newSignatureKeys()
	require.NoError(t, err)
	enc, err := newEncryptionKeys()
	require.NoError(t, err)
	r, err := makePermanent(is)
	require.NoError(t, err)
	p.sig <- sig
	p.enc <- enc
	q := p.queueOf(is)
	q.ready <- r
	require.Equal(t, 3, p.Stats().Ready)

	p.Close()
	require.Equal(t, make([]byte, len(sig.priv)), []byte(sig.priv), "Ed25519 private key wiped")
	require.Equal(t, make([]byte, len(enc.priv)), enc.priv, "X25519 private key wiped")
	require.Equal(t, make([]byte, len(r.secret)), r.secret, "secret identity wiped")
	require.Zero(t, p.Stats().Ready)
	p.Close() // idempotent

	_, secret, _, err := p.NewPermanent(is)
	require.NoError(t, err)
	require.NotEmpty(t, secret)
	_, _, err = p.Provisional(is.AppID(), TargetEmail, "a@example.com")
	require.NoError(t, err)
	st := p.Stats()
	require.Equal(t, int64(0), st.Taken)
	require.Equal(t, int64(2), st.Missed)
	require.Zero(t, st.Ready, "a closed pool makes nothing ahead")
}

// manualPool returns a pool of size whose filler the test runs itself (settle), so that what the
// pool holds after each step is exact: kick finds the filler started and only signals it, and
// Close finds it stopped.
func manualPool(t *testing.T, size int) *KeyPool {
	t.Helper()
	p := NewKeyPool(size)
	p.started.Store(true)
	close(p.done)
	t.Cleanup(p.Close)
	return p
}

// settle runs the filler's rounds until it makes nothing more, as the filler does after a take.
func settle(t *testing.T, p *KeyPool) {
	t.Helper()
	for i := 0; p.fillRound(); i++ {
		require.Less(t, i, 1000, "the filler never stops")
	}
}

// readyPermanents counts the permanent identities the pool holds.
func readyPermanents(p *KeyPool) int {
	p.permMu.RLock()
	defer p.permMu.RUnlock()
	n := 0
	for _, q := range p.perm {
		n += len(q.ready)
	}
	return n
}

// Six apps creating identities in turn are all served from the pool after each one's first
// identity: more apps than permanentApps share the bounded room instead of evicting each
// other's queues (the pool then made identities only to wipe them, and every creation made its
// keys on the request's path), and the pool never holds more than the bound.
func TestKeyPoolServesAppsTakingTurns(t *testing.T) {
	t.Parallel()
	const size, apps, rounds = 4, 6, 10
	p := manualPool(t, size)
	var issuers []*Issuer
	var pubs [][]byte
	for range apps {
		is, pub := newTestIssuer(t)
		issuers, pubs = append(issuers, is), append(pubs, pub)
	}
	for range rounds {
		for i, is := range issuers {
			userID, secret, _, err := p.NewPermanent(is)
			require.NoError(t, err)
			perm, err := ParsePermanent(secret, is.AppID(), pubs[i])
			require.NoError(t, err, "signed by the Issuer it was asked of")
			require.NoError(t, perm.CheckUserID(userID))
			settle(t, p)
			require.LessOrEqual(t, readyPermanents(p), permanentApps*size)
		}
	}
	st := p.Stats()
	require.Equal(t, int64(apps), st.Missed, "only each app's first identity made on the request's path")
	require.Equal(t, int64(apps*(rounds-1)), st.Taken)
}

// Identities made ahead for an Issuer go only to that Issuer. When the pool holds its bound and
// another app asks, the room comes from the app no longer asking, its identities wiped as they
// are removed (and its queue then forgotten), never from an app still asking; Drop wipes an
// Issuer's queue at once.
func TestKeyPoolQueuesPerIssuer(t *testing.T) {
	t.Parallel()
	const size = 4
	p := manualPool(t, size)
	var issuers []*Issuer
	var pubs [][]byte
	for range permanentApps {
		is, pub := newTestIssuer(t)
		issuers, pubs = append(issuers, is), append(pubs, pub)
		_, _, _, err := p.NewPermanent(is)
		require.NoError(t, err)
		settle(t, p)
	}
	require.Equal(t, permanentApps*size, readyPermanents(p))
	for i, is := range issuers {
		for range size {
			_, secret, _, err := p.NewPermanent(is)
			require.NoError(t, err)
			_, err = ParsePermanent(secret, is.AppID(), pubs[i])
			require.NoError(t, err, "signed by the Issuer it was asked of")
		}
	}
	require.Equal(t, int64(permanentApps*size), p.Stats().Taken)
	settle(t, p)
	require.Equal(t, permanentApps*size, readyPermanents(p))

	// A fifth app asks while the four still are: it gets room only as theirs is drawn from.
	extra, _ := newTestIssuer(t)
	_, _, _, err := p.NewPermanent(extra)
	require.NoError(t, err)
	settle(t, p)
	require.Empty(t, p.perm[extra].ready, "no app still asking loses an identity")
	_, _, _, err = p.NewPermanent(issuers[1])
	require.NoError(t, err)
	settle(t, p)
	require.Len(t, p.perm[extra].ready, 1, "the room freed goes to the app below its share")
	require.Len(t, p.perm[issuers[1]].ready, size-1, "not refilled past its share")

	// issuers[0] stops asking: once the others have drawn permCap identities, its room goes.
	held := putBack(t, p.perm[issuers[0]]) // not queueOf: that counts as asking
	require.Len(t, held, size)
	for i := 0; p.perm[issuers[0]] != nil; i++ {
		require.Less(t, i, 100, "the idle app's queue is never emptied")
		for _, is := range append(issuers[1:], extra) {
			_, _, _, err := p.NewPermanent(is)
			require.NoError(t, err)
			settle(t, p)
			require.LessOrEqual(t, readyPermanents(p), permanentApps*size)
		}
	}
	for _, r := range held {
		require.Equal(t, make([]byte, len(r.secret)), r.secret, "an identity removed is wiped")
	}
	require.Len(t, p.perm[extra].ready, size, "the app that asked has its share")

	held = putBack(t, p.perm[issuers[1]])
	p.Drop(issuers[1])
	for _, r := range held {
		require.Equal(t, make([]byte, len(r.secret)), r.secret, "a dropped Issuer's queue is wiped")
	}
}

// putBack takes the identities q holds and puts them back, oldest first, returning them:
// references to identities that are in q.
func putBack(t *testing.T, q *permanentQueue) []*readyPermanent {
	t.Helper()
	var taken, held []*readyPermanent
	for len(q.ready) > 0 {
		taken = append(taken, <-q.ready)
	}
	for _, r := range taken {
		select {
		case q.ready <- r:
			held = append(held, r)
		default:
		}
	}
	require.NotEmpty(t, held)
	return held
}

// A nil pool makes everything on the caller's path.
func TestNilKeyPool(t *testing.T) {
	t.Parallel()
	var p *KeyPool
	is, pub := newTestIssuer(t)
	userID, secret, _, err := p.NewPermanent(is)
	require.NoError(t, err)
	perm, err := ParsePermanent(secret, is.AppID(), pub)
	require.NoError(t, err)
	require.NoError(t, perm.CheckUserID(userID))
	secret, _, err = p.Provisional(is.AppID(), TargetEmail, "a@example.com")
	require.NoError(t, err)
	prov, err := ParseProvisional(secret, is.AppID())
	require.NoError(t, err)
	require.False(t, bytes.Equal(prov.PrivateSignatureKey, make([]byte, ed25519.PrivateKeySize)))
	p.Close()
	p.Drop(is)
	require.Equal(t, KeyPoolStats{}, p.Stats())
}

// A dropped Issuer (its app deleted, or its secret changed) gets no queue again: a request that
// still held it when it was dropped has its identity made on its own path, and the pool makes
// nothing more ahead of time with the old secret.
func TestKeyPoolMakesNothingForADroppedIssuer(t *testing.T) {
	t.Parallel()
	p := NewKeyPool(4)
	t.Cleanup(p.Close)
	is, appPub := newTestIssuer(t)
	_, _, _, err := p.NewPermanent(is)
	require.NoError(t, err)
	waitReady(t, p, 4)
	p.Drop(is)
	require.Zero(t, p.Stats().Ready, "what was made ahead of time is wiped")

	_, secret, _, err := p.NewPermanent(is)
	require.NoError(t, err)
	_, err = ParsePermanent(secret, is.AppID(), appPub)
	require.NoError(t, err, "the request still gets a valid identity")
	p.permMu.RLock()
	defer p.permMu.RUnlock()
	for _, q := range p.perm {
		require.NotSame(t, is, q.is, "a queue for the dropped Issuer came back")
	}
}
