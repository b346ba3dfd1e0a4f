package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// Records of the records benchmark: recordsTotal records of recordClear clear bytes, formats
// 9 and 10 alternating, under recordSessions transparent sessions of the dump (records share
// sessions as an app's transparent sessions share them); recordsDistinct distinct ciphertexts
// repeated to make the total (the server caches no result, only keys).
const (
	recordsTotal    = 1_000_000
	recordsDistinct = 20_000
	recordClear     = 200
	recordSessions  = 4
)

// BenchmarkRecords1MDecryptAndAudit: 1 000 000 CSV records of 200 clear bytes (formats 9
// and 10) through the real binaries, `idvault exit decrypt-records` (standard output read
// back and checked) against `idvault exit` over the dump in PostgreSQL, in records per second,
// beside the rate of decrypting the same ciphertexts in-process with exit/encryption (one
// goroutine, keys in memory) measured in the same iteration; the peak resident memory of both
// processes; and `idvault exit audit` of the same file. Goals: decrypt-records at least 0.3x
// the in-process rate, each process under 64 MiB, the audit at least 5x faster than
// decrypt-records.
func BenchmarkRecords1MDecryptAndAudit(b *testing.B) {
	dir := exitpgtest.BenchDump(b, gen.Options{Users: 8, Groups: 2, Resources: 40, Seed: 3, WriteKeys: true})
	l := exitpgtest.LoadBench(b, dir)
	ctx := context.Background()
	db, err := exitdb.Open(ctx, exitdb.Config{DSN: l.DSN, AppID: l.AppID})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var values []string
	for _, id := range exitpgtest.Identities(b, dir) {
		values = append(values, id.Value)
	}
	if _, err := db.Import(ctx, values); err != nil {
		b.Fatal(err)
	}
	sessions := sessionKeys(b, db, dir)

	// The records file, and the clear output decrypt-records must write (by hash).
	work := b.TempDir()
	in := filepath.Join(work, "records.csv")
	cts, wantSum := writeRecords(b, in, sessions)

	port := apptest.FreePort(b)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	srv := startExitBinary(b, l, url)
	env := append(os.Environ(), "IDVAULT_EXIT__TOKEN="+exitpgtest.Token)

	decryptRecords := func() (float64, float64) {
		h := sha256.New()
		secs, rss := benchRun(b, env, h, "exit", "decrypt-records", "--url", url, "--in", in, "--out", "-", "--field", "v")
		if !bytes.Equal(h.Sum(nil), wantSum) {
			b.Fatal("decrypt-records wrote other bytes than the clear records")
		}
		return recordsTotal / secs, rss
	}
	keys := encryption.KeyMap{}
	for id, k := range sessions {
		keys[id] = k
	}
	inProcess := func() float64 {
		start := time.Now()
		for i := range recordsTotal {
			if _, _, err := encryption.Decrypt(keys, cts[i%recordsDistinct]); err != nil {
				b.Fatal(err)
			}
		}
		return recordsTotal / time.Since(start).Seconds()
	}

	decryptRecords() // warm up: pool, key cache, page cache
	idle := vmKiB(b, srv.Cmd.Process.Pid, "VmRSS")
	var rates, base, audits []float64
	var clientRSS, auditRSS float64
	for b.Loop() {
		base = append(base, inProcess())
		rate, rss := decryptRecords()
		rates = append(rates, rate)
		clientRSS = max(clientRSS, rss)
		secs, rss := benchRun(b, env, io.Discard, "exit", "audit", "--url", url, "--in", in, "--field", "v")
		audits = append(audits, recordsTotal/secs)
		auditRSS = max(auditRSS, rss)
	}
	peak := vmKiB(b, srv.Cmd.Process.Pid, "VmHWM")
	b.ReportMetric(apptest.Median(base), "inprocess_records/s")
	b.ReportMetric(apptest.Median(rates), "decrypt-records_records/s")
	b.ReportMetric(apptest.Median(rates)/apptest.Median(base), "ratio(goal>=0.3)")
	b.ReportMetric(apptest.Median(audits), "audit_records/s")
	b.ReportMetric(apptest.Median(audits)/apptest.Median(rates), "audit_speedup(goal>=5)")
	b.ReportMetric(clientRSS, "client_peak_RSS_MiB(goal<64)")
	b.ReportMetric(auditRSS, "audit_peak_RSS_MiB")
	b.ReportMetric(idle/1024, "server_idle_RSS_MiB")
	b.ReportMetric(peak/1024, "server_peak_RSS_MiB(goal<64)")
}

// sessionKeys finds recordSessions transparent sessions of the dump (formats 9 to 11 that
// decrypt) whose session key the imported identities reach.
func sessionKeys(b *testing.B, db *exitdb.DB, dir string) map[encryption.SimpleID][]byte {
	b.Helper()
	manifest, err := dump.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	kf := db.KeyFinder(context.Background())
	out := map[encryption.SimpleID][]byte{}
	for _, e := range manifest {
		if e.Expected != dump.ExpectOK || e.Format < 9 || len(out) == recordSessions {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(e.ResourceID)
		if err != nil {
			b.Fatal(err)
		}
		rid, err := encryption.ParseResourceID(raw)
		if err != nil || !rid.Composite {
			continue
		}
		if key, err := kf.FindKey(rid.ID); err == nil {
			out[rid.ID] = key
		}
	}
	if len(out) == 0 {
		b.Fatal("no transparent session of the dump opens")
	}
	return out
}

// writeRecords writes the records file ("id,v" with v the base64 ciphertext) and returns the
// distinct ciphertexts and the SHA-256 of the output decrypt-records must write.
func writeRecords(b *testing.B, path string, sessions map[encryption.SimpleID][]byte) ([][]byte, []byte) {
	b.Helper()
	var ids []encryption.SimpleID
	for id := range sessions {
		ids = append(ids, id)
	}
	rng := rand.New(rand.NewChaCha8([32]byte{5}))
	cts := make([][]byte, recordsDistinct)
	clears := make([][]byte, recordsDistinct)
	for i := range cts {
		clear := make([]byte, recordClear)
		for j := range clear {
			clear[j] = 'a' + byte(rng.IntN(26))
		}
		id := ids[i%len(ids)]
		v := encryption.V9 + encryption.Version(i%2)
		ct, _, err := encryption.Encrypt(v, sessions[id], clear, encryption.EncryptOptions{SessionID: &id})
		if err != nil {
			b.Fatal(err)
		}
		cts[i], clears[i] = ct, clear
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	want := sha256.New()
	w.WriteString("id,v\n")
	want.Write([]byte("id,v\n"))
	for i := range recordsTotal {
		k := i % recordsDistinct
		fmt.Fprintf(w, "%d,%s\n", i, base64.StdEncoding.EncodeToString(cts[k]))
		fmt.Fprintf(want, "%d,%s\n", i, clears[k])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return cts, want.Sum(nil)
}
