package loadgen_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apps"
	"idvault/app/apptest"
	"idvault/app/config"
	"idvault/app/fakeauth"
	"idvault/app/idserver"
	"idvault/app/loadgen"
	"idvault/app/logging"
	"idvault/app/server"
)

// clients is the number of concurrent keep-alive clients of every row (as wrk -c 32).
const clients = 32

// row is one line of the table: a route driven by 32 clients, with its goal.
type row struct {
	name string
	kind string // which requests (see requests)
	// goal is met when the rate >= goalRate, or when rate/bare >= goalRatio, in some round.
	goalRate, goalRatio float64
	goalText            string
	rounds              []measure
}

// measure is one round of a row: its rate and the bare route's rate in the slices interleaved
// with it.
type measure struct{ rate, bare, perCommit, commitMS, cpu, bareCPU, clientCPU float64 }

func (m measure) ratio() float64 { return m.rate / m.bare }

// slice is how long the route and the bare route take turns: short turns make both see the same
// machine (other work on a shared machine changes from one second to the next).
const slice = 500 * time.Millisecond

// BenchmarkHTTPLoad drives the real server (the same server.New, handlers, store on disk and
// request log as `idvault serve`) over loopback with 32 concurrent keep-alive clients, beside a
// bare fiber route that echoes JSON, in rounds that measure every row one after the other, and
// prints the table the README quotes. Each row runs for IDVAULT_LOAD_SECONDS (default 3) per
// round, over IDVAULT_LOAD_ROUNDS rounds (default 2); IDVAULT_LOAD_ONLY=<part of a row's name>
// keeps that row and the baseline (for a profile). Run alone: make bench-http.
func BenchmarkHTTPLoad(b *testing.B) {
	seconds := envInt("IDVAULT_LOAD_SECONDS", 3)
	rounds := envInt("IDVAULT_LOAD_ROUNDS", 2)

	bare := listen(b, apptest.EchoApp())

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
	app := env.Server(func(d *server.Deps) {
		d.Logger = log
		d.IdentityServer = idserver.New(is.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, env.Prom, log)
		d.FakeAuth = fakeauth.New(env.Apps, env.Dir, config.Default().FakeAuth, env.Prom, log)
	})
	addr := listen(b, app)

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
	run := time.Now().UnixNano() // new emails stay new across rounds and runs
	listURI := "/apps/" + apps.URLID(fa.ID) + "/public_identities?emails=" + strings.Join(known, ",")

	rows := []*row{
		{name: "POST /identity, known email", kind: "known", goalRatio: 0.5, goalText: ">= 0.5x bare"},
		{name: "POST /identity, new email (durable)", kind: "new", goalRate: 7000, goalText: ">= 7,000/s"},
		{name: "POST /public_identity, new email (durable)", kind: "public-new", goalRate: 5000, goalText: ">= 5,000/s"},
		{name: "fake auth public_identities, 100 known emails", kind: "list", goalRate: 2000, goalText: ">= 2,000/s"},
	}
	gen := startGenerator(b)

	if only := os.Getenv("IDVAULT_LOAD_ONLY"); only != "" { // profiling one row
		var kept []*row
		for _, r := range rows {
			if strings.Contains(r.name, only) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	// IDVAULT_LOAD_NO_BARE=1 skips the bare route's turns, so that a CPU profile holds the
	// route's requests only (the ratios are then not measured).
	noBare := os.Getenv("IDVAULT_LOAD_NO_BARE") != ""
	turns := max(1, int(time.Duration(seconds)*time.Second/slice))
	var next int64 // request counter across the turns of a row, so new emails stay new
	for round := range rounds {
		for _, r := range rows {
			var routeRes, bareRes loadgen.Result
			before := env.Store.RecordCommits()
			var cpu, bareCPU, clientCPU time.Duration
			for range turns {
				t0 := cpuTime()
				var br turn
				if !noBare {
					br = gen.drive(b, spec{Addr: bare, Kind: "echo"})
				}
				t1 := cpuTime()
				res := gen.drive(b, spec{Addr: addr, Kind: r.kind, From: next, Run: run, ListURI: listURI})
				cpu, bareCPU, clientCPU = cpu+cpuTime()-t1, bareCPU+t1-t0, clientCPU+res.CPU
				bareRes = add(bareRes, br.Result)
				next += res.Requests + res.Errors
				if res.Errors > 0 {
					b.Fatalf("%s, round %d: %d errors, first: %s", r.name, round+1, res.Errors, res.FirstError)
				}
				routeRes = add(routeRes, res.Result)
			}
			after := env.Store.RecordCommits()
			m := measure{
				rate: routeRes.PerSecond(), bare: bareRes.PerSecond(),
				cpu:       float64(cpu.Microseconds()) / float64(max(routeRes.Requests, 1)),
				bareCPU:   float64(bareCPU.Microseconds()) / float64(max(bareRes.Requests, 1)),
				clientCPU: float64(clientCPU.Microseconds()) / float64(max(routeRes.Requests, 1)),
			}
			if n := after.Commits - before.Commits; n > 0 {
				m.perCommit = float64(after.Writes-before.Writes) / float64(n)
				m.commitMS = float64((after.Busy - before.Busy).Microseconds()) / 1000 / float64(n)
			}
			r.rounds = append(r.rounds, m)
		}
	}
	fmt.Print(table(rows, seconds))
	for _, r := range rows {
		b.ReportMetric(bestRatio(r), metricName(r.name))
	}
}

func add(a, b loadgen.Result) loadgen.Result {
	a.Requests += b.Requests
	a.Errors += b.Errors
	a.Elapsed += b.Elapsed
	if a.FirstError == "" {
		a.FirstError = b.FirstError
	}
	return a
}

// table renders the rows as Markdown: per round, the route's rate, the bare route's rate in
// the turns interleaved with it, and their ratio; the goal is met if some round meets it.
func table(rows []*row, seconds int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d keep-alive clients over loopback from a separate load generator process; each row takes turns of %v with the bare route, %d s each per round; rounds separated by \" / \"; GOMAXPROCS=%d, %d CPUs\n\n",
		clients, slice, seconds, runtimeProcs(), runtime.NumCPU())
	sb.WriteString("| route | req/s | bare route req/s (same turns) | x bare route | server CPU µs/request (bare) | server-only ceiling, req/s | load generator CPU µs/request | writes per commit (ms each) | goal | met |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		var rates, bares, ratios, cpus, ceilings, clientCPUs, groups []string
		met := "no"
		for _, m := range r.rounds {
			rates = append(rates, thousands(m.rate))
			if m.bare > 0 {
				bares = append(bares, thousands(m.bare))
				ratios = append(ratios, fmt.Sprintf("%.2f", m.ratio()))
			} else {
				bares, ratios = append(bares, "-"), append(ratios, "-")
			}
			if m.bare > 0 {
				cpus = append(cpus, fmt.Sprintf("%.0f (%.0f)", m.cpu, m.bareCPU))
			} else {
				cpus = append(cpus, fmt.Sprintf("%.0f", m.cpu))
			}
			ceilings = append(ceilings, thousands(float64(runtime.NumCPU())*1e6/max(m.cpu, 1)))
			clientCPUs = append(clientCPUs, fmt.Sprintf("%.0f", m.clientCPU))
			groups = append(groups, "-")
			if m.perCommit > 0 {
				groups[len(groups)-1] = fmt.Sprintf("%.1f (%.1f)", m.perCommit, m.commitMS)
			}
			if (r.goalRate > 0 && m.rate >= r.goalRate) || (r.goalRatio > 0 && m.bare > 0 && m.ratio() >= r.goalRatio) {
				met = "yes"
			}
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, strings.Join(rates, " / "),
			strings.Join(bares, " / "), strings.Join(ratios, " / "), strings.Join(cpus, " / "),
			strings.Join(ceilings, " / "), strings.Join(clientCPUs, " / "),
			strings.Join(groups, " / "), r.goalText, met)
	}
	return sb.String()
}

func bestRatio(r *row) float64 {
	best := 0.0
	for _, m := range r.rounds {
		if m.bare > 0 {
			best = max(best, m.ratio())
		}
	}
	return best
}

func metricName(name string) string {
	f := func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}
	return strings.Trim(strings.Map(f, strings.ToLower(name)), "_") + "_x_bare"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	b.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return ln.Addr().String()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// cpuTime is the CPU time (user and system) this process has used: the servers only, since
// the load generator runs in a process of its own. On a shared machine it says what a request
// costs where req/s says what the scheduler allowed.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
