package loadgen_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/loadgen"

	"github.com/idvault/idvault/app/apptest"
)

// The load generator of BenchmarkHTTPLoad runs in a process of its own (this test binary,
// started again to run TestGeneratorProcess), so that the benchmark's process holds only the
// servers: its CPU time is then the servers' alone, and the generator reports its own (the
// table's last column). In one process, the CPU per request would mix the two.

// spec is one turn the generator process runs: Kind names the requests (see requests).
type spec struct {
	Addr string
	Kind string
	From int64 // number of the turn's first request (new emails stay new)
	Run  int64 // nonce of the benchmark run (new emails stay new across runs)
	URI  string
	// BodyFile is the body of "post" and "stream" turns.
	BodyFile string
}

// turn is what the generator process answers for a spec: the run's result and the CPU time
// the generator process spent on it, or an error.
type turn struct {
	loadgen.Result
	CPU time.Duration
	Err string
}

const (
	generatorEnv = "IDVAULT_LOADGEN_PROCESS"
	resultPrefix = "loadgen-result "
	// streams is the number of streams a "stream" turn sends one after the other.
	streams = 20
)

// generator is a running generator process: specs go to its stdin, results come back on its
// stdout, one JSON line each.
type generator struct {
	in  io.Writer
	out *bufio.Scanner
}

// startGenerator starts the generator process; it ends with the benchmark.
func startGenerator(b *testing.B) *generator {
	cmd := exec.Command(os.Args[0], "-test.run=^TestGeneratorProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), generatorEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = in.Close() // the process ends when its input does
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &generator{in: in, out: sc}
}

// drive runs one turn in the generator process.
func (g *generator) drive(b *testing.B, s spec) turn {
	line, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.in.Write(append(line, '\n')); err != nil {
		b.Fatalf("load generator process: %v", err)
	}
	for g.out.Scan() {
		rest, ok := strings.CutPrefix(g.out.Text(), resultPrefix)
		if !ok {
			continue // the test framework's own lines
		}
		var t turn
		if err := json.Unmarshal([]byte(rest), &t); err != nil {
			b.Fatal(err)
		}
		if t.Err != "" {
			b.Fatalf("load generator process: %s", t.Err)
		}
		return t
	}
	b.Fatalf("load generator process ended: %v", g.out.Err())
	return turn{}
}

// TestGeneratorProcess is the generator process of BenchmarkHTTPLoad; it does nothing unless
// started by it. It reads one spec per line and answers one result line each, until its input
// ends.
func TestGeneratorProcess(t *testing.T) {
	if os.Getenv(generatorEnv) == "" {
		t.Skip("the load generator process of BenchmarkHTTPLoad (make bench)")
	}
	var streamClient *http.Client // one client for every stream turn, its connection kept alive
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var s spec
		var res turn
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			res.Err = err.Error()
		} else if s.Kind == "stream" {
			if streamClient == nil {
				streamClient = exitclient.New("http://"+s.Addr, "").HTTP
			}
			c0 := apptest.ProcessCPU()
			r, err := streamTurn(streamClient, s)
			res = turn{Result: r, CPU: apptest.ProcessCPU() - c0}
			if err != nil {
				res.Err = err.Error()
			}
		} else if next, err := requests(s); err != nil {
			res.Err = err.Error()
		} else {
			c0 := apptest.ProcessCPU()
			r, err := loadgen.Run(context.Background(), loadgen.Config{
				Addr: s.Addr, Clients: clients, Duration: slice, MaxRequests: 1_000_000, Want: fiber.StatusOK,
				Next: func(i int64, req *fasthttp.Request) { next(s.From+i, req) },
			})
			res = turn{Result: r, CPU: apptest.ProcessCPU() - c0}
			if err != nil {
				res.Err = err.Error()
			}
		}
		line, _ := json.Marshal(res)
		fmt.Printf("%s%s\n", resultPrefix, line)
	}
}

// streamTurn posts the body file to s.URI streams times, one after the other, as `idvault exit
// decrypt` posts a file (net/http sends it with sendfile), and reads each answer to its end.
func streamTurn(client *http.Client, s spec) (loadgen.Result, error) {
	buf := make([]byte, 1<<20)
	start := time.Now()
	var r loadgen.Result
	for range streams {
		if err := postFile(client, s, buf); err != nil {
			return r, err
		}
		r.Requests++
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// postFile posts the body file to s.URI once and reads the answer to its end through buf.
func postFile(client *http.Client, s spec, buf []byte) error {
	f, err := os.Open(s.BodyFile)
	if err != nil {
		return err
	}
	// The answer streams while the body is still being sent: the file stays open until the
	// answer's end.
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr+s.URI, f)
	if err != nil {
		return err
	}
	req.ContentLength = st.Size()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.CopyBuffer(sink{}, resp.Body, buf); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stream: status %d", resp.StatusCode)
	}
	return nil
}

// sink discards like io.Discard, without its ReaderFrom (which reads 8 KiB at a time).
type sink struct{}

func (sink) Write(p []byte) (int, error) { return len(p), nil }

// requests are the requests of a kind of turn: "echo" (the bare route), "known" and "new"
// (POST /identity with one of 100 known emails, or a new one), "public-new" (POST
// /public_identity with a new email), "get" (GET URI) and "post" (POST URI with the bytes of
// BodyFile).
func requests(s spec) (loadgen.Request, error) {
	postEmail := func(path string, email func(i int64) string) loadgen.Request {
		return func(i int64, req *fasthttp.Request) {
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(path)
			req.Header.SetContentType(fiber.MIMEApplicationJSON)
			req.SetBodyString(`{"email":"` + email(i) + `"}`)
		}
	}
	switch s.Kind {
	case "echo":
		return postEmail("/echo", func(int64) string { return "bench@example.com" }), nil
	case "known":
		return postEmail("/identity", func(i int64) string { return knownEmail(int(i % 100)) }), nil
	case "new":
		return postEmail("/identity", func(i int64) string { return newEmail("n", s.Run, i) }), nil
	case "public-new":
		return postEmail("/public_identity", func(i int64) string { return newEmail("p", s.Run, i) }), nil
	case "get":
		return func(_ int64, req *fasthttp.Request) { req.SetRequestURI(s.URI) }, nil
	case "post":
		body, err := os.ReadFile(s.BodyFile)
		if err != nil {
			return nil, err
		}
		return func(_ int64, req *fasthttp.Request) {
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(s.URI)
			req.Header.SetContentType("application/octet-stream")
			req.SetBody(body)
		}, nil
	}
	return nil, fmt.Errorf("unknown kind of turn %q", s.Kind)
}

// newEmail is the i-th new email of a run: unique (the run and i), and in no order of keys (its
// first part is i mixed by splitmix64's finalizer), as real addresses arrive: each lands in a leaf
// of the store's B+tree of its own, where emails numbered in order would all be appended to its
// last leaves.
func newEmail(prefix string, run, i int64) string {
	z := uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return fmt.Sprintf("%08x.%s%d-%d@example.com", uint32(z>>32), prefix, run, i)
}

// knownEmail is the i-th of the 100 emails the benchmark creates before it starts.
func knownEmail(i int) string { return fmt.Sprintf("known%d@example.com", i) }
