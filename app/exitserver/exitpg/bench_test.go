package exitpg_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/pgtest"
)

// benchDump returns a generated dump directory, made once and kept in the temp directory for
// later runs (generation is deterministic; a dump of 10 000 users takes a while to make).
func benchDump(b *testing.B, opts gen.Options) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("idvault-bench-dump-u%d-r%d-s%d", opts.Users, opts.Resources, opts.Seed))
	if _, err := os.Stat(filepath.Join(dir, dump.ManifestFile)); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, err := gen.Generate(ctx, tmp, opts); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

func loadBench(b *testing.B, dir string) *loaded {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	l := &loaded{dir: dir, dsn: pgtest.NewDB(b)}
	if _, err := dump.Load(ctx, l.dsn, dir, nil); err != nil {
		b.Fatal(err)
	}
	app, err := dump.ReadApp(dir)
	if err != nil {
		b.Fatal(err)
	}
	l.appID = app.ID
	return l
}

// psql runs SQL on the dump's database.
func psql(b *testing.B, dsn, sql string) string {
	b.Helper()
	out, err := exec.Command(pgtest.Bin(b, "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql).CombinedOutput()
	if err != nil {
		b.Fatalf("psql: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkImport10kUsers: identities imported per second through PUT /v1/identities (the
// bulk client, batches of 500) into a dump of 10 000 users; the exit_* tables are emptied
// before each iteration. Goal: at least 3 000 identities/s.
func BenchmarkImport10kUsers(b *testing.B) {
	l := loadBench(b, benchDump(b, gen.Options{Users: 10_000, Groups: 10, Resources: 10, Seed: 1}))
	in := serve(b, l, 0)
	ids := identities(b, l.dir)
	var rates []float64
	for b.Loop() {
		b.StopTimer()
		tables := psql(b, l.dsn, `SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE tablename LIKE 'exit\_%'`)
		if tables != "" {
			psql(b, l.dsn, "TRUNCATE "+tables)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := in.client.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 500})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Imported != len(ids) {
			b.Fatalf("imported %d of %d (already %d, refused %d)", sum.Imported, len(ids), sum.AlreadyImported, len(sum.Refused))
		}
		rates = append(rates, float64(len(ids))/time.Since(start).Seconds())
	}
	b.ReportMetric(float64(len(ids)), "identities")
	b.ReportMetric(apptest.Median(rates), "identities/s")
	b.ReportMetric(100*apptest.Median(rates)/3000, "pct_of_goal(3000/s)")
}

// BenchmarkStream1GiBServerRSS: the peak resident memory (VmHWM) of a real `idvault exit`
// process while 1 GiB of format 8 (a stream, 1 MiB chunks) goes through POST /v1/decrypt,
// beside its resident memory once started and warmed up. The ciphertext is made on the fly
// under a key of the dump (resource_keys.jsonl). Goal: peak at most 64 MiB.
func BenchmarkStream1GiBServerRSS(b *testing.B) {
	dir := benchDump(b, gen.Options{Users: 8, Groups: 2, Resources: 40, Seed: 3, WriteKeys: true})
	l := loadBench(b, dir)
	rid, key := streamKey(b, dir)

	port := apptest.FreePort(b)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := startExitBinary(b, l, url)
	c := exitclient.New(url, token)
	if _, err := c.Import(context.Background(), identities(b, dir), exitclient.ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	const size = 1 << 30
	stream := func(size int64) {
		pr, pw := io.Pipe()
		want := sha256.New()
		go func() {
			w, err := encryption.NewEncryptWriter(pw, encryption.V8, key, encryption.EncryptOptions{ResourceID: &rid})
			if err == nil {
				src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{9}), size), want)
				if _, err = io.CopyBuffer(w, src, make([]byte, 1<<20)); err == nil {
					err = w.Close()
				}
			}
			_ = pw.CloseWithError(err)
		}()
		req, _ := http.NewRequest("POST", url+"/v1/decrypt", pr)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.HTTP.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got := sha256.New()
		n, err := io.CopyBuffer(struct{ io.Writer }{got}, resp.Body, make([]byte, 1<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	stream(8 << 20) // warm up: pool, key cache, buffers
	idle := vmKiB(b, cmd.Cmd.Process.Pid, "VmRSS")
	var seconds float64
	for b.Loop() {
		start := time.Now()
		stream(size)
		seconds = time.Since(start).Seconds()
	}
	peak := vmKiB(b, cmd.Cmd.Process.Pid, "VmHWM")
	b.ReportMetric(idle/1024, "idle_RSS_MiB")
	b.ReportMetric(peak/1024, "peak_RSS_MiB(goal<=64)")
	b.ReportMetric(size/1e6/seconds, "MB/s")
}

// streamKey finds a format 8 resource of the dump that decrypts, and its key.
func streamKey(b *testing.B, dir string) (encryption.SimpleID, []byte) {
	b.Helper()
	keyEntries, err := dump.ReadKeys(dir)
	if err != nil {
		b.Fatal(err)
	}
	keys := map[string]string{}
	for _, k := range keyEntries {
		keys[k.File] = k.Key
	}
	manifest, err := dump.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range manifest {
		if e.Format != 8 || e.Expected != dump.ExpectOK || keys[e.File] == "" {
			continue
		}
		id, err1 := base64.StdEncoding.DecodeString(e.ResourceID)
		key, err2 := base64.StdEncoding.DecodeString(keys[e.File])
		if err1 != nil || err2 != nil || len(id) != 16 {
			continue
		}
		var rid encryption.SimpleID
		copy(rid[:], id)
		return rid, key
	}
	b.Fatal("no format 8 resource in the dump")
	return encryption.SimpleID{}, nil
}

// vmKiB reads a field of /proc/PID/status in KiB.
func vmKiB(b *testing.B, pid int, field string) float64 {
	b.Helper()
	v, ok := apptest.ProcStatusKiB(pid, field)
	if !ok {
		b.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	return v
}
