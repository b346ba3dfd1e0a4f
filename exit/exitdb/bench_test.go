package exitdb_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/chain/chaintest"
	"github.com/idvault/idvault/exit/exitdb"
	"github.com/idvault/idvault/exit/keys"
)

// importGoal is the goal for identities imported per second.
const importGoal = 3000

// BenchmarkImport imports 10 000 users in batches of 500 into a fresh
// database per round and reports identities/s and its ratio to the goal
// (3 000/s). Every third user is in one of 50 groups.
func BenchmarkImport(b *testing.B) {
	const users, batch = 10_000, 500
	w := chaintest.NewWorld(b)
	all := make([]*chaintest.User, users)
	for i := range all {
		all[i] = w.User(fmt.Sprint("user", i), true)
	}
	for g := range 50 {
		var members []*chaintest.User
		for i := g * 3; i < users; i += 150 {
			members = append(members, all[i])
		}
		w.Group(all[g], members, nil)
	}
	identities := make([]string, users)
	for i, u := range all {
		identities[i] = u.Identity
	}
	var elapsed time.Duration
	rounds := 0
	for b.Loop() {
		b.StopTimer()
		dsn := newDSN(b)
		createDumpSchema(b, dsn)
		load(b, dsn, &w.Dump)
		db, err := exitdb.Open(b.Context(), exitdb.Config{DSN: dsn, AppID: w.AppID})
		require.NoError(b, err)
		b.StartTimer()
		start := time.Now()
		for i := 0; i < users; i += batch {
			res, err := db.Import(b.Context(), identities[i:i+batch])
			if err != nil {
				b.Fatal(err)
			}
			if res.Imported != batch {
				b.Fatalf("imported %d of %d", res.Imported, batch)
			}
		}
		elapsed += time.Since(start)
		rounds++
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	rate := float64(users*rounds) / elapsed.Seconds()
	floor := cryptoFloor(b, w, all[:2000])
	b.ReportMetric(rate, "identities/s")
	b.ReportMetric(rate/importGoal, "x_goal")
	b.ReportMetric(floor, "crypto_only_identities/s")
	b.ReportMetric(rate/floor, "x_crypto_only")
}

// cryptoFloor measures, on the same machine and in the same run, the rate
// of the cryptography every import needs and nothing else (parse and check
// the identity, decrypt the verification key, open and check the user
// key), on as many goroutines as Import uses: the ceiling the database
// work is compared with.
func cryptoFloor(b *testing.B, w *chaintest.World, users []*chaintest.User) float64 {
	rows := make(map[string]chaintest.DeviceRow)
	for _, d := range w.Dump.Devices {
		if d.IsGhostDevice {
			rows[string(d.UserID)] = d
		}
	}
	vks := make(map[string][]byte)
	for _, u := range w.Dump.Users {
		vks[string(u.UserID)] = u.EncryptedVerificationKey
	}
	next := make(chan *chaintest.User)
	var wg sync.WaitGroup
	start := time.Now()
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range next {
				p, err := identity.ParsePermanent(u.Identity, w.AppID, w.AppSecret[32:])
				if err != nil {
					b.Error(err)
					return
				}
				vk, err := keys.DecryptVerificationKey(vks[string(p.UserID)], p.UserSecret)
				if err != nil {
					b.Error(err)
					return
				}
				d := rows[string(p.UserID)]
				ghost := keys.EncryptionKeyPair{Public: [32]byte(d.PublicEncryptionKey), Private: vk.PrivateEncryptionKey}
				if _, err := keys.OpenSealedPrivateEncryptionKey(d.SealedUserPrivateEncryptionKey, ghost, [32]byte(d.UserPublicEncryptionKey)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for _, u := range users {
		next <- u
	}
	close(next)
	wg.Wait()
	return float64(len(users)) / time.Since(start).Seconds()
}
