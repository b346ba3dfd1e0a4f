package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/encryption"
)

// BenchmarkStream1GiBServerRSS: the peak resident memory (VmHWM) of a real `idvault exit`
// process while 1 GiB of format 8 (a stream, 1 MiB chunks) goes through POST /v1/decrypt,
// beside its resident memory once started and warmed up. The ciphertext is made on the fly
// under a key of the dump (resource_keys.jsonl). Goal: peak at most 64 MiB.
func BenchmarkStream1GiBServerRSS(b *testing.B) {
	dir := exitpgtest.BenchDump(b, gen.Options{Users: 8, Groups: 2, Resources: 40, Seed: 3, WriteKeys: true})
	l := exitpgtest.LoadBench(b, dir)
	rid, key := streamKey(b, dir)

	port := apptest.FreePort(b)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := startExitBinary(b, l, url)
	c := exitclient.New(url, exitpgtest.Token)
	if _, err := c.Import(context.Background(), exitpgtest.Identities(b, dir), exitclient.ImportOptions{}); err != nil {
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
		req.Header.Set("Authorization", "Bearer "+exitpgtest.Token)
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
