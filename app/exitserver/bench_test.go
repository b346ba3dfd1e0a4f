package exitserver_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// The exit server's figures, each beside its baseline measured in the same iteration (so both
// see the same machine load), reported as medians over the iterations and as a ratio with its
// goal. The database is the in-memory fake: its key lookup stands for a key-cache hit.

// bareServer is the baseline route: net/http, as the exit server, answering the body it gets.
type bareServer struct{ http.Server }

func newBareServer() *bareServer {
	s := &bareServer{}
	s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = w.Write(body)
	})
	return s
}

func (s *bareServer) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.Server.Shutdown(ctx)
}

// burst sends n requests from workers goroutines and returns requests per second.
func burst(b *testing.B, client *http.Client, url string, body []byte, n, workers int) float64 {
	b.Helper()
	var wg sync.WaitGroup
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				resp, err := client.Post(url, "application/octet-stream", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// sink discards like io.Discard, without its ReaderFrom (which reads 8 KiB at a time).
type sink struct{}

func (sink) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkDecrypt1KiBFormat10VsBareRoute: 1 KiB format 10 decrypts per second (key found in
// memory) beside a bare net/http route returning a 1 KiB body. Goal: at least 40 %.
func BenchmarkDecrypt1KiBFormat10VsBareRoute(b *testing.B) {
	db := exitfake.New()
	who := db.AddImportedUser()
	enc, err := db.Encrypt(who, encryption.V10, bytes.Repeat([]byte{0xa5}, 1024), encryption.EncryptOptions{})
	if err != nil {
		b.Fatal(err)
	}
	exitURL, client := apptest.ServeServer(b, exitserver.New(db, exitserver.Config{}))
	bareURL, _ := apptest.ServeServer(b, newBareServer())
	plain := bytes.Repeat([]byte{0xa5}, 1024)
	const n, workers = 3000, 16
	burst(b, client, bareURL+"/echo", plain, 500, workers) // warm up connections
	burst(b, client, exitURL+"/v1/decrypt", enc, 500, workers)
	var bare, dec []float64
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			bare = append(bare, burst(b, client, bareURL+"/echo", plain, n, workers))
			dec = append(dec, burst(b, client, exitURL+"/v1/decrypt", enc, n, workers))
		} else {
			dec = append(dec, burst(b, client, exitURL+"/v1/decrypt", enc, n, workers))
			bare = append(bare, burst(b, client, bareURL+"/echo", plain, n, workers))
		}
	}
	b.ReportMetric(apptest.Median(bare), "bare_req/s")
	b.ReportMetric(apptest.Median(dec), "decrypt_req/s")
	b.ReportMetric(100*apptest.Median(dec)/apptest.Median(bare), "pct_of_bare(goal>=40)")
}

// BenchmarkStream64MiBFormat11VsRawOpen: MB/s of a 64 MiB format 11 stream posted to
// /v1/decrypt and read back, beside raw XChaCha20-Poly1305 opens of the same 64 MiB in 1 MiB
// pieces. Goal: at least 60 %.
func BenchmarkStream64MiBFormat11VsRawOpen(b *testing.B) {
	const size = 64 << 20
	db := exitfake.New()
	who := db.AddImportedUser()
	enc, err := db.Encrypt(who, encryption.V11, bytes.Repeat([]byte{0xa5}, size), encryption.EncryptOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// Served as `idvault exit` serves it: netguard's listener, the body idle limit, the budget.
	srv := exitserver.New(db, exitserver.Config{})
	url := "http://" + apptest.ServeLoopback(b, srv.Serve, func() error { return srv.Shutdown(5 * time.Second) })
	// The client of `idvault exit decrypt`, sending the ciphertext from a file as it does
	// (net/http then hands the file to sendfile).
	client := exitclient.New(url, "").HTTP
	b.Cleanup(client.CloseIdleConnections)
	buf := make([]byte, 1<<20)

	aead, _ := chacha20poly1305.NewX(bytes.Repeat([]byte{7}, 32))
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	piece := aead.Seal(nil, nonce, make([]byte, 1<<20), nil)
	dst := make([]byte, 1<<20)
	// CPU time (user and system, whole process: server and client) per 64 MiB, beside raw
	// opening's: how far the machine's cores could take the ratio if both were free.
	var rawCPU, streamCPU []float64
	raw := func() float64 {
		start, cpu := time.Now(), apptest.ProcessCPU()
		for range size >> 20 {
			if _, err := aead.Open(dst[:0], nonce, piece, nil); err != nil {
				b.Fatal(err)
			}
		}
		rawCPU = append(rawCPU, float64(apptest.ProcessCPU()-cpu)/1e6)
		return size / 1e6 / time.Since(start).Seconds()
	}
	encFile := filepath.Join(b.TempDir(), "enc")
	if err := os.WriteFile(encFile, enc, 0o600); err != nil {
		b.Fatal(err)
	}
	stream := func() float64 {
		f, err := os.Open(encFile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		start, cpu := time.Now(), apptest.ProcessCPU()
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/decrypt", f)
		req.ContentLength = int64(len(enc))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(sink{}, resp.Body, buf)
		resp.Body.Close()
		if err != nil || n != size || resp.StatusCode != 200 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
		streamCPU = append(streamCPU, float64(apptest.ProcessCPU()-cpu)/1e6)
		return size / 1e6 / time.Since(start).Seconds()
	}
	// The machine's transport ceiling: the same bytes sent from the same file over a plain
	// loopback TCP connection and echoed back (no HTTP, no decryption), as a stream through the
	// server moves them.
	var echoCPU []float64
	echo := tcpEcho(b, encFile, &echoCPU)
	stream()
	streamCPU = streamCPU[:0]
	var rawR, streamR, echoR []float64
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			rawR = append(rawR, raw())
			streamR = append(streamR, stream())
			echoR = append(echoR, echo())
		} else {
			echoR = append(echoR, echo())
			streamR = append(streamR, stream())
			rawR = append(rawR, raw())
		}
	}
	b.ReportMetric(apptest.Median(rawR), "raw_MB/s")
	b.ReportMetric(apptest.Median(streamR), "http_MB/s")
	b.ReportMetric(100*apptest.Median(streamR)/apptest.Median(rawR), "pct_of_raw(goal>=60)")
	b.ReportMetric(apptest.Median(echoR), "tcp_echo_MB/s")
	b.ReportMetric(100*apptest.Median(echoR)/apptest.Median(rawR), "tcp_echo_pct_of_raw")
	b.ReportMetric(100*apptest.Median(streamR)/apptest.Median(echoR), "pct_of_tcp_echo")
	b.ReportMetric(apptest.Median(rawCPU), "raw_cpu_ms")
	b.ReportMetric(apptest.Median(streamCPU), "http_cpu_ms")
	b.ReportMetric(apptest.Median(echoCPU), "tcp_echo_cpu_ms")
	// No server can move and decrypt a stream with less CPU than the echo's copies plus the
	// raw opens; spread perfectly over every core, that work bounds the ratio from above.
	floor := (apptest.Median(echoCPU) + apptest.Median(rawCPU)) / 1e3 / float64(runtime.NumCPU())
	b.ReportMetric(100*size/1e6/floor/apptest.Median(rawR), "ceiling_pct_of_raw")
}

// tcpEcho starts a loopback TCP server that reads what it is sent and writes each piece back,
// and returns a function that sends the file at path through it (with sendfile, as net/http
// sends a file), reads it back, and gives the MB/s of the round trip: what moving the bytes
// alone costs on the machine the benchmark runs on. Each call appends its CPU time (ms, whole process) to cpu.
func tcpEcho(b *testing.B, path string, cpu *[]float64) func() float64 {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := int(st.Size())
	addr := apptest.ServeTCP(b, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 1<<20)
		for left := size; left > 0; {
			n, err := io.ReadFull(c, buf[:min(len(buf), left)])
			if err != nil {
				return
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
			left -= n
		}
	})
	buf := make([]byte, 1<<20)
	return func() float64 {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		start, cpu0 := time.Now(), apptest.ProcessCPU()
		go func() { _, _ = io.Copy(c, f) }()
		n, err := io.CopyBuffer(sink{}, io.LimitReader(c, int64(size)), buf)
		if err != nil || n != int64(size) {
			b.Fatalf("echo: %d bytes, %v", n, err)
		}
		*cpu = append(*cpu, float64(apptest.ProcessCPU()-cpu0)/1e6)
		return float64(size) / 1e6 / time.Since(start).Seconds()
	}
}
