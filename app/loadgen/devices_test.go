package loadgen_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/store"
)

// device is a performance device that BenchmarkDevices switches off on a server of its own.
type device struct {
	name  string
	store store.Options // the options that switch it off (Path and MasterKey are set later)
	dir   directory.Options
	apps  apps.Options
	log   logging.Options // the request log's options beside Level and Format
}

// devices are the devices BenchmarkDevices measures, each against the server with all of them.
var devices = []device{
	{name: "no-linger", store: store.Options{NoLinger: true}},
	{name: "sync-freelist", store: store.Options{SyncFreelist: true}},
	{name: "array-freelist", store: store.Options{ArrayFreelist: true}},
	{name: "no-key-pool", dir: directory.Options{NoKeyPool: true}},
	{name: "no-pool-yield", dir: directory.Options{NoKeyPoolYield: true}},
	{name: "no-record-cache", store: store.Options{RecordCacheBytes: -1}},
	{name: "no-app-cache", apps: apps.Options{NoCache: true}},
	{name: "no-log-buffer", log: logging.Options{NoBuffer: true}},
	{name: "no-fast-log", log: logging.Options{NoFastFormat: true}},
}

// BenchmarkDevices measures what each performance device gives the identity rows of the
// Performance table (`POST /identity` for a known email and for new emails, durable, and
// `POST /public_identity` for new emails): one server with every device on and one server per
// device with that device off, each served as BenchmarkHTTPLoad serves idvault, take turns of
// 500 ms in a rotating order, over IDVAULT_LOAD_ROUNDS rounds (default 3) of
// IDVAULT_LOAD_SECONDS (default 2) per server and row. Each server opens its own copy of one
// data file seeded with IDVAULT_DEVICES_SEED identities (default 20 000) and dropped from the
// page cache, as a server restarted on a data file opens it. IDVAULT_DEVICES=<names,
// comma-separated> keeps those devices, IDVAULT_LOAD_ONLY=<rows, comma-separated> those rows
// (known, new, public-new).
//
// It prints, per row and server, the rate, the server CPU per request, the ratio of the rates to
// the server with every device on over the whole run and the median of that ratio over the
// passes (a pass is one turn of every server: the machine changes less within one), and the
// group commit's work. A device stays in idvault while switching it off slows a row by 5 % or
// more (store/OPERATIONS.md).
func BenchmarkDevices(b *testing.B) {
	seconds := envInt("IDVAULT_LOAD_SECONDS", 2)
	rounds := envInt("IDVAULT_LOAD_ROUNDS", 3)
	seedN := envInt("IDVAULT_DEVICES_SEED", 20000)
	chosen := devices
	if only := os.Getenv("IDVAULT_DEVICES"); only != "" {
		chosen = nil
		for _, d := range devices {
			if strings.Contains(","+only+",", ","+d.name+",") {
				chosen = append(chosen, d)
			}
		}
	}
	gen := startGenerator(b)
	raw := make([]byte, store.MasterKeySize)
	_, _ = rand.Read(raw)
	mk, err := store.NewMasterKey(raw)
	if err != nil {
		b.Fatal(err)
	}
	seed, isID := seedDataFile(b, mk, seedN)

	type server struct {
		name   string
		addr   string
		st     *store.Store
		routes map[string]*tally
		// passes are the rate and server CPU per request of each pass (one turn of every server).
		passes map[string][]rate
		// commits are the group commit's counters during the server's turns.
		commits map[string]store.CommitStats
	}
	servers := []*server{}
	for _, d := range append([]device{{name: "all on"}}, chosen...) {
		path := filepath.Join(b.TempDir(), "idvault.db")
		copyColdFile(b, seed, path)
		opts := d.store
		opts.Path, opts.MasterKey = path, mk
		st, err := store.Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		addr := serveIdentities(b, st, d, isID)
		servers = append(servers, &server{name: d.name, addr: addr, st: st, routes: map[string]*tally{}, passes: map[string][]rate{}, commits: map[string]store.CommitStats{}})
	}

	run := time.Now().UnixNano()
	var next int64
	turnOf := func(addr, kind string) turn {
		t := gen.drive(b, spec{Addr: addr, Kind: kind, From: next, Run: run})
		next += t.Requests + t.Errors
		if t.Errors > 0 {
			b.Fatalf("%s: %d errors, first: %s", kind, t.Errors, t.FirstError)
		}
		return t
	}
	kinds := []string{"known", "new", "public-new"}
	if only := os.Getenv("IDVAULT_LOAD_ONLY"); only != "" {
		kinds = strings.Split(only, ",")
	}
	for _, s := range servers { // warm up: connections, the key pools' first fills
		for _, k := range kinds {
			turnOf(s.addr, k)
			s.routes[k] = &tally{}
		}
	}
	turns := max(1, int(time.Duration(seconds)*time.Second/slice))
	for round := range rounds {
		for _, k := range kinds {
			for i := range turns {
				for j := range servers { // rotating order: no server always follows another
					s := servers[(i+j+round)%len(servers)]
					t := s.routes[k]
					before, c0 := *t, s.st.RecordCommits()
					t.run(func() turn { return turnOf(s.addr, k) })
					s.commits[k] = s.commits[k].Add(s.st.RecordCommits().Sub(c0))
					s.passes[k] = append(s.passes[k], rate{n: t.n - before.n, elapsed: t.elapsed - before.elapsed})
				}
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nBenchmarkDevices: %d rounds of %d s per server and row, %d identities seeded; load average %s\n\n", rounds, seconds, seedN, loadAverage())
	sb.WriteString("| row | server | req/s | server CPU µs per request | ratio to all on | median of the passes' ratios | passes slower than all on | writes per commit | ms per commit, of it bbolt's writing and fdatasyncs |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range kinds {
		base := servers[0]
		for _, s := range servers {
			t := s.routes[k]
			ratios := make([]float64, len(s.passes[k]))
			slower := 0
			for i, p := range s.passes[k] {
				ratios[i] = p.perSecond() / base.passes[k][i].perSecond()
				if ratios[i] < 1 {
					slower++
				}
			}
			c := s.commits[k]
			n := float64(max(c.Commits, 1))
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %.3f | %.3f | %d of %d | %.1f | %.2f, %.2f |\n", k, s.name, thousands(t.perSecond()), perRequest(t.cpu, t.n),
				t.perSecond()/base.routes[k].perSecond(), apptest.Median(ratios), slower, len(ratios), float64(c.Writes)/n, ms(c.Busy)/n, ms(c.Disk)/n)
		}
	}
	fmt.Print(sb.String())
}

// seedDataFile makes a data file holding an identity server's app, n of its permanent identities
// and the 100 known emails of the known row, and returns its path and the app's ID.
func seedDataFile(b *testing.B, mk *store.MasterKey, n int) (path string, isID []byte) {
	path = filepath.Join(b.TempDir(), "seed.db")
	st, err := store.Open(store.Options{Path: path, MasterKey: mk})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reg, err := apps.NewRegistry(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	is, err := reg.Create("identity server", false, store.AppOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dir := directory.New(st)
	defer dir.Close()
	var i atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for range clients {
		wg.Go(func() {
			for k := i.Add(1); k <= int64(n); k = i.Add(1) {
				if _, err := dir.Permanent(is.App, newEmail("seed", 0, k)); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range 100 {
		if _, err := dir.Permanent(is.App, knownEmail(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err, _ := first.Load().(error); err != nil {
		b.Fatal(err)
	}
	return path, is.App.ID
}

// copyColdFile copies the closed file from to to, syncs the copy and drops it from the page
// cache, as a data file a server restarts on after the machine did.
func copyColdFile(b *testing.B, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fadvise(int(dst.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
}

// serveIdentities serves the identity server of app isID and fake authentication over st, as
// BenchmarkHTTPLoad serves them (server.Serve behind netguard, the request log of `idvault serve`
// to a file), with the registry, the directory and the log made with d's options, and returns
// the address.
func serveIdentities(b *testing.B, st *store.Store, d device, isID []byte) string {
	reg, err := apps.NewRegistryWith(st, nil, d.apps)
	if err != nil {
		b.Fatal(err)
	}
	dir := directory.NewWith(st, d.dir)
	b.Cleanup(dir.Close)
	if _, err := reg.Get(isID); err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(filepath.Dir(st.Path()), "idvault.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = logFile.Close() })
	logOpts := d.log
	logOpts.Level, logOpts.Format = "info", "text"
	log, logWriter := logging.New(logOpts, logFile)
	b.Cleanup(func() { _ = logWriter.Close() })
	prom := server.NewRegistry()
	srv := server.New(server.Deps{
		Server: apptest.ServerConfig(), Logger: log, Registry: prom, Checks: map[string]server.Checker{},
		IdentityServer: idserver.New(isID, reg, dir, config.IdentityServer{Enabled: true}, prom, log),
		FakeAuth:       fakeauth.New(reg, dir, config.Default().FakeAuth, prom, log),
	})
	return apptest.ServeLoopback(b, srv.Serve, func() error { return srv.App.ShutdownWithTimeout(5 * time.Second) })
}
