package loadgen_test

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/store"
)

// clients is the number of concurrent keep-alive clients of the load rows (as wrk -c 32).
const clients = 32

// slice is how long a row and its baseline take turns: short turns make both see the same
// machine (other work on a shared machine changes from one second to the next).
const slice = 500 * time.Millisecond

// rate is a count over a time: requests, streams or crypto operations.
type rate struct {
	n       int64
	elapsed time.Duration
}

func (r *rate) add(n int64, d time.Duration) { r.n += n; r.elapsed += d }

func (r rate) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.n) / r.elapsed.Seconds()
}

// tally adds up one side of a row over its turns, the route's or its echo's: the requests and
// their time, the servers' CPU time during the turns (the benchmark's process holds both
// servers) and the load generator's (what the clients cost on the shared cores, per request,
// beside the servers).
type tally struct {
	rate
	cpu, genCPU time.Duration
}

// run runs one turn of the load generator and adds it up: the process's CPU time is the
// servers' only, since the load generator runs in a process of its own.
func (t *tally) run(drive func() turn) {
	c0 := apptest.ProcessCPU()
	res := drive()
	t.cpu += apptest.ProcessCPU() - c0
	t.genCPU += res.CPU
	t.add(res.Requests, res.Elapsed)
}

// row is one line of the table: a figure measured in turns with its baseline.
type row struct {
	key              string // IDVAULT_LOAD_ONLY names rows by it
	figure, baseline string
	goal             float64 // ratio to the baseline
	route            func() turn
	// echo and crypto are the baseline's turns; crypto is nil unless the baseline is the
	// series bound 1/(1/C + 1/E) of crypto rate C and echo rate E.
	echo   func() turn
	crypto func() (n int64, d time.Duration)
	unit   string
	// gc, when set, sets the process's garbage collector for the row's and its baseline's turns
	// and returns what puts it back: the exit rows run as `idvault exit` runs (exitserver.TuneGC).
	gc func() (restore func())

	routes, echoes tally
	cryptoRate     rate
	commits        store.CommitStats // the group commit's work during the route's turns
	// disk is the disk floor of the route's commits (creation rows): as many commits of as many
	// pages, written and synced alone (diskFloor).
	disk rate
}

// base is the baseline's rate: the echo's, or the series bound with the crypto floor.
func (r *row) base() float64 {
	e := r.echoes.perSecond()
	if r.crypto == nil {
		return e
	}
	c := r.cryptoRate.perSecond()
	if c <= 0 || e <= 0 {
		return 0
	}
	return 1 / (1/c + 1/e)
}

func (r *row) ratio() float64 {
	if b := r.base(); b > 0 {
		return r.routes.perSecond() / b
	}
	return 0
}

// BenchmarkHTTPLoad prints the performance page's table (app/PERFORMANCE.md): each figure of idvault's hot paths
// beside its baseline, measured in the same run in alternating turns of 500 ms, with the ratio
// and its goal. The identity rows drive the real server (server.New with the identity server
// and fake authentication, the store on disk with fsync, the request log of `idvault serve`
// writing to a file, served by Server.Serve through netguard's listener as `idvault serve`
// serves it) with 32 concurrent keep-alive clients over loopback; the exit rows drive
// the exit server (exitserver.New over the in-memory database, served through netguard as
// `idvault exit` serves it). Every client runs in a load generator process of its own
// (process_test.go), so the benchmark's process holds only the servers and the crypto floor.
//
// IDVAULT_LOAD_SECONDS (default 3) is each row's time per round, over IDVAULT_LOAD_ROUNDS
// rounds (default 2); IDVAULT_LOAD_ONLY=<keys, comma-separated> keeps those rows (known, known-bare, new,
// public-new, list, stream, decrypt-1k);
// IDVAULT_LOAD_NO_BARE=1 skips the baselines' turns (for a CPU profile of the routes alone).
// IDVAULT_BENCH_PAGE=<file> also writes the table into that page, between its markers
// (writeTable), when every row ran with its baseline: make bench and make bench-http name
// app/PERFORMANCE.md.
func BenchmarkHTTPLoad(b *testing.B) {
	seconds := envInt("IDVAULT_LOAD_SECONDS", 3)
	rounds := envInt("IDVAULT_LOAD_ROUNDS", 2)
	date := time.Now().UTC()
	gen := startGenerator(b)

	// Baselines: a bare fiber route echoing JSON, and a net/http route echoing the body.
	bare := listen(b, apptest.EchoApp())
	netEcho := listenHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Echoing while reading, as the exit server streams: net/http must be told.
		_ = http.NewResponseController(w).EnableFullDuplex()
		w.Header().Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		_, _ = io.Copy(w, r.Body)
	}))

	env := apptest.New(b)
	is := env.CreateApp(b, false).App
	fa := env.CreateApp(b, true).App
	// The logger of `idvault serve` with its default options (text, info), writing every request
	// line to a real file, as a server whose stderr goes to a file or journal does.
	logFile, err := os.Create(filepath.Join(b.TempDir(), "idvault.log"))
	if err != nil {
		b.Fatal(err)
	}
	log, logWriter := logging.New(logging.Options{Level: "info", Format: "text"}, logFile)
	b.Cleanup(func() { _ = logWriter.Close(); _ = logFile.Close() })
	// Served as `idvault serve` serves it: Server.Serve, behind netguard's listener.
	srv := server.New(server.Deps{
		Server: apptest.ServerConfig(), Logger: log, Registry: env.Prom, Checks: map[string]server.Checker{},
		IdentityServer: idserver.New(is.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, env.Prom, log),
		FakeAuth:       fakeauth.New(env.Apps, env.Dir, config.Default().FakeAuth, env.Prom, log),
	})
	addr := apptest.ServeLoopback(b, srv.Serve, func() error { return srv.App.ShutdownWithTimeout(5 * time.Second) })
	// A diagnostic row, to split the known row's cost: the same identity server's handlers alone
	// on a bare fiber app, served as the echo route is (no middleware, no netguard: not how
	// idvault serves them).
	bareIS := idserver.New(is.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, server.NewRegistry(), log)
	bareApp := fiber.New(fiber.Config{DisableStartupMessage: true, Immutable: true})
	bareApp.Post("/identity", bareIS.Authenticate, bareIS.Identity)
	bareAddr := listen(b, bareApp)
	known := make([]string, 100)
	for i := range known {
		known[i] = knownEmail(i)
		if _, err := env.Dir.Permanent(is, known[i]); err != nil {
			b.Fatal(err)
		}
		if _, err := env.Dir.Permanent(fa, known[i]); err != nil {
			b.Fatal(err)
		}
	}
	listURI := "/apps/" + apps.URLID(fa.ID) + "/public_identities?emails=" + strings.Join(known, ",")

	// The exit server, with one user's keys, and its two ciphertexts in files.
	db := exitfake.New()
	who := db.AddImportedUser()
	exitSrv := exitserver.New(db, exitserver.Config{})
	exitAddr := apptest.ServeLoopback(b, exitSrv.Serve, func() error { return exitSrv.Shutdown(5 * time.Second) })
	cipherFile := func(name string, v encryption.Version, size int) string {
		enc, err := db.Encrypt(who, v, bytes.Repeat([]byte{0xa5}, size), encryption.EncryptOptions{ChunkSize: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), name)
		if err := os.WriteFile(path, enc, 0o600); err != nil {
			b.Fatal(err)
		}
		return path
	}
	stream5M := cipherFile("v11-5MiB", encryption.V11, 5<<20)
	small := cipherFile("v10-1KiB", encryption.V10, 1<<10)

	run := time.Now().UnixNano() // new emails stay new across rounds and runs
	var next int64               // request counter across turns, so new emails stay new
	load := func(s spec) func() turn {
		return func() turn {
			s.From, s.Run = next, run
			t := gen.drive(b, s)
			next += t.Requests + t.Errors
			if t.Errors > 0 {
				b.Fatalf("%s %s: %d errors, first: %s", s.Kind, s.URI, t.Errors, t.FirstError)
			}
			return t
		}
	}
	echo := load(spec{Addr: bare, Kind: "echo"})
	exitGC := func() func() { return exitserver.TuneGC(exitserver.DefaultMemoryBudget) }
	rows := []*row{
		{key: "known", figure: "`POST /identity`, known email", baseline: "bare fiber JSON echo route", goal: 0.7, unit: "req/s",
			route: load(spec{Addr: addr, Kind: "known"}), echo: echo},
		{key: "known-bare", figure: "the same, its handlers alone on a bare fiber app (no middleware, no netguard; no goal)", baseline: "bare fiber JSON echo route", unit: "req/s",
			route: load(spec{Addr: bareAddr, Kind: "known"}), echo: echo},
		{key: "new", figure: "`POST /identity`, new email, durable", baseline: "1/(1/C + 1/E), C = Ed25519 key pair + signature on all cores, E = echo", goal: 0.5, unit: "req/s",
			route: load(spec{Addr: addr, Kind: "new"}), echo: echo, crypto: cryptoTurn(permanentCrypto)},
		{key: "public-new", figure: "`POST /public_identity`, new email, durable", baseline: "1/(1/C + 1/E), C = Ed25519 + X25519 key pairs on all cores", goal: 0.5, unit: "req/s",
			route: load(spec{Addr: addr, Kind: "public-new"}), echo: echo, crypto: cryptoTurn(provisionalCrypto)},
		{key: "list", figure: "fake auth `public_identities`, 100 known emails", baseline: "bare fiber JSON echo route", goal: 0.12, unit: "req/s",
			route: load(spec{Addr: addr, Kind: "get", URI: listURI}), echo: echo},
		{key: "stream", figure: fmt.Sprintf("exit: 5 MiB v11 stream, 1 MiB chunks, %d in a row from a Go client", streams), baseline: "net/http route echoing the body", goal: 0.85, unit: "MB/s",
			route: load(spec{Addr: exitAddr, Kind: "stream", URI: "/v1/decrypt", BodyFile: stream5M}),
			echo:  load(spec{Addr: netEcho, Kind: "stream", URI: "/echo", BodyFile: stream5M}), gc: exitGC},
		{key: "decrypt-1k", figure: "exit: 1 KiB v10 ciphertext, 32 connections", baseline: "net/http route echoing the body", goal: 0.8, unit: "req/s",
			route: load(spec{Addr: exitAddr, Kind: "post", URI: "/v1/decrypt", BodyFile: small}),
			echo:  load(spec{Addr: netEcho, Kind: "post", URI: "/echo", BodyFile: small}), gc: exitGC},
	}
	if only := os.Getenv("IDVAULT_LOAD_ONLY"); only != "" { // profiling some rows
		keys := strings.Split(only, ",")
		var kept []*row
		for _, r := range rows {
			if slices.Contains(keys, r.key) {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			b.Fatalf("IDVAULT_LOAD_ONLY=%s: no such row (known, known-bare, new, public-new, list, stream, decrypt-1k)", only)
		}
		rows = kept
	}
	noBare := os.Getenv("IDVAULT_LOAD_NO_BARE") != ""
	for _, r := range rows { // warm up: connections, caches, the first chunk buffers
		r.route()
		if !noBare {
			r.echo()
		}
	}
	turns := max(1, int(time.Duration(seconds)*time.Second/slice))
	var floor *diskFloor // made at the first creation row's turn
	for range rounds {
		for _, r := range rows {
			restore := func() {}
			if r.gc != nil {
				restore = r.gc()
			}
			for i := range turns {
				// Alternate which goes first, so neither always follows the other.
				base := func() {
					if noBare {
						return
					}
					r.echoes.run(r.echo)
					if r.crypto != nil {
						r.cryptoRate.add(r.crypto())
					}
				}
				if i%2 == 1 {
					base()
				}
				s0 := env.Store.RecordCommits()
				r.routes.run(r.route)
				s1 := env.Store.RecordCommits()
				turn := s1.Sub(s0)
				r.commits = r.commits.Add(turn)
				if n := turn.Commits; r.crypto != nil && n > 0 && !noBare {
					if floor == nil {
						floor = newDiskFloor(b, filepath.Dir(env.Store.Path()))
					}
					r.disk.add(floor.run(b, float64(turn.Pages)/float64(n), int(min(n, 50))))
				}
				if i%2 == 0 {
					base()
				}
			}
			restore()
		}
	}
	out := table(rows, date, seconds, rounds)
	fmt.Print(out)
	if path := os.Getenv("IDVAULT_BENCH_PAGE"); path != "" {
		// The page holds the whole table: a run that kept some rows, or skipped the baselines,
		// leaves it as it is.
		if os.Getenv("IDVAULT_LOAD_ONLY") != "" || noBare {
			fmt.Printf("%s not written: IDVAULT_LOAD_ONLY or IDVAULT_LOAD_NO_BARE makes a partial table\n", path)
		} else if err := writeTable(path, out); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range rows {
		b.ReportMetric(r.ratio(), metricName(r.figure))
	}
}

// permanentCrypto is the cryptography a new permanent identity cannot do without: an Ed25519
// key pair (its ephemeral signature key) and one signature (the app's delegation signature).
func permanentCrypto(msg []byte) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	_ = ed25519.Sign(priv, msg)
}

// provisionalCrypto is a new provisional identity's: an Ed25519 key pair and an X25519 key pair
// (its public key on Edwards25519's table, the fastest way idvault has).
func provisionalCrypto([]byte) {
	if _, _, err := ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	var x [32]byte
	_, _ = rand.Read(x[:])
	if _, err := identity.X25519Base(x[:]); err != nil {
		panic(err)
	}
}

// cryptoTurn runs op on every core for one slice: the crypto floor C of a creation row.
func cryptoTurn(op func(msg []byte)) func() (int64, time.Duration) {
	return func() (int64, time.Duration) {
		var n atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(slice)
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				msg := make([]byte, 64)
				for time.Now().Before(deadline) {
					op(msg)
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return n.Load(), time.Since(start)
	}
}

// table renders the rows as the performance page's table, with the machine, the date and the
// load average at the start.
func table(rows []*row, date time.Time, seconds, rounds int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%s, %d cores (GOMAXPROCS %d), %s, %s UTC; load average %s at the start\n\n",
		cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), date.Format("2006-01-02 15:04"), loadAverage())
	sb.WriteString("| figure | baseline (same run) | figure, baseline | ratio | goal | ok | server CPU µs per request, row / echo | load generator CPU µs per request, row / echo |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		scale := 1.0
		if r.unit == "MB/s" {
			scale = 5 << 20 / 1e6 // each stream is 5 MiB of clear bytes
		}
		goal, ok := fmt.Sprintf(">= %.2gx", r.goal), "no"
		switch {
		case r.goal == 0: // a diagnostic row
			goal, ok = "-", "-"
		case r.ratio() >= r.goal:
			ok = "yes"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s / %s %s | %.3gx | %s | %s | %s / %s | %s / %s |\n", r.figure, r.baseline,
			thousands(r.routes.perSecond()*scale), thousands(r.base()*scale), r.unit, r.ratio(), goal, ok,
			perRequest(r.routes.cpu, r.routes.n), perRequest(r.echoes.cpu, r.echoes.n),
			perRequest(r.routes.genCPU, r.routes.n), perRequest(r.echoes.genCPU, r.echoes.n))
	}
	fmt.Fprintf(&sb, "\nEach row alternates turns of %v (%d streams for the stream row) with its baseline, %d s per round, %d rounds.", slice, streams, seconds, rounds)
	for _, r := range rows {
		if r.crypto != nil {
			fmt.Fprintf(&sb, " %s: C = %s/s, E = %s/s.", r.figure, thousands(r.cryptoRate.perSecond()), thousands(r.echoes.perSecond()))
		}
		if n := r.commits.Commits; n > 0 {
			c := r.commits
			group := float64(c.Writes) / float64(n)
			fmt.Fprintf(&sb, " %s: %.1f writes per commit, %.2f ms per commit, of it %.2f ms in bbolt's writing of its %.1f pages and meta page with their two fdatasyncs", r.figure,
				group, ms(c.Busy)/float64(n), ms(c.Disk)/float64(n), float64(c.Pages)/float64(n))
			if c.Disk > 0 {
				fmt.Fprintf(&sb, " (those alone, back to back, would allow %s writes per second)", thousands(group*1000*float64(n)/ms(c.Disk)))
			}
			if r.disk.n > 0 {
				fmt.Fprintf(&sb, "; as many pages written at random places of a scratch file on the same disk, with the same two fdatasyncs: %.2f ms", ms(r.disk.elapsed)/float64(r.disk.n))
			}
			sb.WriteString(".")
		}
	}
	sb.WriteString("\n")
	return sb.String()
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// perRequest is a CPU time per request in µs, as the table prints it ("-" without requests).
func perRequest(cpu time.Duration, n int64) string {
	if n <= 0 {
		return "-"
	}
	return thousands(float64(cpu.Microseconds()) / float64(n))
}

// cpuModel is the first "model name" of /proc/cpuinfo, or the architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}

// loadAverage is the one-minute load average of /proc/loadavg, "?" where there is none.
func loadAverage() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			return f[0]
		}
	}
	return "?"
}

func metricName(name string) string {
	f := func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}
	s := strings.Map(f, strings.ToLower(name))
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_") + "_ratio"
}

// thousands formats v as an integer with comma separators.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// listen serves app on 127.0.0.1:0 until the benchmark ends and returns its address.
func listen(b *testing.B, app *fiber.App) string {
	return apptest.ServeLoopback(b, app.Listener, func() error { return app.ShutdownWithTimeout(5 * time.Second) })
}

// listenHTTP serves h with net/http on 127.0.0.1:0 until the benchmark ends.
func listenHTTP(b *testing.B, h http.Handler) string {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return apptest.ServeLoopback(b, srv.Serve, srv.Close)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
