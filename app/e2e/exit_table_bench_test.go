package e2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
	"github.com/idvault/idvault/exit/pgtest"
)

// The decrypt-table benchmark's table: IDVAULT_BENCH_TABLE_ROWS rows (default benchTableRows,
// the figure; `make bench` sets a smaller one, see the Makefile), 1.6 ciphertext fields
// a row (field a always, b in three rows of five), 100 to 1,000 clear bytes each, formats 9 and
// 10 under four transparent sessions of the dump; benchDistinct distinct ciphertexts repeated
// (the server caches keys, never results).
const (
	benchTableRows = 1_000_000
	benchDistinct  = 20_000
)

// BenchmarkDecryptTable: `idvault exit decrypt-table` (the real binaries, source and
// destination in one local PostgreSQL, the exit server over the dump in the same cluster) in
// rows/s against the psql pipeline of exit/README.md (psql \copy | decrypt-records | psql \copy) on
// the same rows in the same iteration (goal: at least 2x), and in fields/s against decrypting the
// same fields in-process with exit/encryption (one goroutine, keys in memory; goal: at least
// 0.3x); the peak RSS of the client and of the server (goal: each under 64 MiB); the same with
// two exit servers and two workers; and the resume cost: a run SIGKILLed once half the rows are
// committed and run again, its total time against the uninterrupted run's (goal: at most 1.1x).
// On a machine shared with other work, wall rates move with the load (reported at the start
// and the end); the CPU time a row of every process of a run (PostgreSQL's included) moves much
// less, and is reported for both paths, for decrypt-table process by process, and against the
// CPU a field of in-process decryption.
func BenchmarkDecryptTable(b *testing.B) {
	rows := benchTableRows
	if s := os.Getenv("IDVAULT_BENCH_TABLE_ROWS"); s != "" {
		var err error
		if rows, err = strconv.Atoi(s); err != nil || rows < 1000 {
			b.Fatalf("IDVAULT_BENCH_TABLE_ROWS=%q: want a number of rows, at least 1000", s)
		}
	}
	ctx := context.Background()
	dumpDir := tableBenchDump(b)
	dumpDSN := pgtest.NewDB(b)
	if _, err := dump.Load(ctx, dumpDSN, dumpDir, nil); err != nil {
		b.Fatal(err)
	}
	app, err := dump.ReadApp(dumpDir)
	if err != nil {
		b.Fatal(err)
	}
	db, err := exitdb.Open(ctx, exitdb.Config{DSN: dumpDSN, AppID: app.ID})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	f, err := os.Open(filepath.Join(dumpDir, dump.IdentitiesFile))
	if err != nil {
		b.Fatal(err)
	}
	ids, err := exitclient.ReadIdentities(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	var values []string
	for _, id := range ids {
		values = append(values, id.Value)
	}
	if _, err := db.Import(ctx, values); err != nil {
		b.Fatal(err)
	}
	keys := sessionKeys(b, db, dumpDir)
	cts, clearBytes := benchCiphertexts(b, keys)

	src := pgtest.NewDB(b)
	fields := benchSourceTable(b, src, cts, rows)
	var wantBytes int64 // the clear bytes of every field, to check each run
	for i := range rows {
		wantBytes += clearBytes[i%benchDistinct]
		if i%5 < 3 {
			wantBytes += clearBytes[(i*7+3)%benchDistinct]
		}
	}

	urls := make([]string, 2)
	servers := make([]*apptest.Proc, 2)
	for i := range servers {
		port := apptest.FreePort(b)
		urls[i] = "http://127.0.0.1:" + strconv.Itoa(port)
		servers[i] = apptest.StartBinary(b, "", []string{"IDVAULT_EXIT__TOKEN=" + tableToken}, urls[i], "exit", "--db", dumpDSN,
			"--app-id", base64.StdEncoding.EncodeToString(app.ID), "--listen", "127.0.0.1:"+strconv.Itoa(port), "--log-level", "warn")
	}
	env := append(os.Environ(), tableEnv...)
	pg := newPGCluster(b, src)
	psql := pgtest.Bin(b, "psql")
	n := 0
	newTable := func() string { n++; return "clear_" + strconv.Itoa(n) }
	check := func(to, col string) {
		sum := "coalesce(sum(length(a)), 0) + coalesce(sum(length(b)), 0)"
		if col == "base64" {
			sum = "coalesce(sum(length(decode(a, 'base64'))), 0) + coalesce(sum(length(decode(b, 'base64'))), 0)"
		}
		got := benchSQL(b, src, "SELECT count(*) || ' ' || ("+sum+") FROM "+to)
		if want := fmt.Sprintf("%d %d", rows, wantBytes); got != want {
			b.Fatalf("%s holds %s rows and clear bytes, want %s", to, got, want)
		}
		benchSQL(b, src, "DROP TABLE "+to+" CASCADE")
		benchSQL(b, src, "DROP TABLE IF EXISTS "+to+"_progress, "+to+"_errors")
	}
	table := func(to string, urls ...string) []string {
		args := []string{"exit", "decrypt-table", "--from", src, "--table", "src", "--key", "id", "--field", "a", "--field", "b", "--to-table", to}
		for _, u := range urls {
			args = append(args, "--url", u)
		}
		return args
	}
	var inprocCPU []float64 // CPU µs a field of in-process decryption (this process, nothing else running in it)
	inProcess := func() float64 {
		km := encryption.KeyMap(keys)
		cpu0 := apptest.ProcessCPU()
		start := time.Now()
		for i := range rows {
			if _, _, err := encryption.Decrypt(km, cts[i%benchDistinct]); err != nil {
				b.Fatal(err)
			}
			if i%5 < 3 {
				if _, _, err := encryption.Decrypt(km, cts[(i*7+3)%benchDistinct]); err != nil {
					b.Fatal(err)
				}
			}
		}
		secs := time.Since(start).Seconds()
		inprocCPU = append(inprocCPU, (apptest.ProcessCPU()-cpu0).Seconds()/float64(fields)*1e6)
		return float64(fields) / secs
	}
	var pipeCPU, tableCPU []float64 // CPU µs a row, every process of the run, PostgreSQL included
	pipeline := func() float64 {
		to := newTable()
		benchSQL(b, src, "CREATE TABLE "+to+" (LIKE src)")
		script := `set -o pipefail
"$PSQL" "$DB" -X -v ON_ERROR_STOP=1 -c "\copy (SELECT * FROM src ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)" \
  | "$IDVAULT" exit decrypt-records --url "$URL" --in - --out - --format csv --field a --field b --clear-encoding base64 \
  | "$PSQL" "$DB" -X -v ON_ERROR_STOP=1 -c "\copy ` + to + ` FROM STDIN WITH (FORMAT csv, HEADER)"`
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(env, "PSQL="+psql, "DB="+src, "URL="+urls[0], "IDVAULT="+apptest.Binary(b))
		procs := pg.steady()
		srv0, pg0 := cpuSeconds(b, servers[0].Cmd.Process.Pid), pg.cpu()
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("the psql pipeline: %v: %s", err, out)
		}
		secs := time.Since(start).Seconds()
		// bash's CPU includes its children's: psql, decrypt-records, psql.
		cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		pg.settle(procs)
		cpu += cpuSeconds(b, servers[0].Cmd.Process.Pid) - srv0 + pg.cpu() - pg0
		pipeCPU = append(pipeCPU, cpu/float64(rows)*1e6)
		check(to, "base64")
		return float64(rows) / secs
	}
	var (
		base, pipe, one, two, resume, inproc []float64
		clientRSS, twoRSS                    float64
		clientCPU, serverCPU, pgCPU          []float64 // cores used by each process in the one-server run
		clientRow, serverRow, pgRow          []float64 // CPU µs a row of each, in the one-server run
	)
	load0 := loadAverage(b)
	for b.Loop() {
		inproc = append(inproc, inProcess())
		pipe = append(pipe, pipeline())

		to := newTable()
		procs := pg.steady()
		srv0, pg0 := cpuSeconds(b, servers[0].Cmd.Process.Pid), pg.cpu()
		secs, rss, cpu := benchRunCPU(b, env, nil, table(to, urls[0])...)
		pg.settle(procs)
		srvCPU, postgres := cpuSeconds(b, servers[0].Cmd.Process.Pid)-srv0, pg.cpu()-pg0
		clientCPU, serverCPU, pgCPU = append(clientCPU, cpu/secs), append(serverCPU, srvCPU/secs), append(pgCPU, postgres/secs)
		perRow := func(s float64) float64 { return s / float64(rows) * 1e6 }
		clientRow, serverRow, pgRow = append(clientRow, perRow(cpu)), append(serverRow, perRow(srvCPU)), append(pgRow, perRow(postgres))
		tableCPU = append(tableCPU, perRow(cpu+srvCPU+postgres))
		check(to, "bytea")
		one, base = append(one, float64(rows)/secs), append(base, secs)
		clientRSS = max(clientRSS, rss)

		to = newTable()
		secs, rss = benchRun(b, env, nil, table(to, urls...)...)
		check(to, "bytea")
		two, twoRSS = append(two, float64(rows)/secs), max(twoRSS, rss)

		// Killed once half the rows are in, then run again.
		to = newTable()
		start := time.Now()
		cmd := exec.Command(apptest.Binary(b), table(to, urls[0])...)
		cmd.Env = env
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		pc, err := pgx.Connect(context.Background(), src)
		if err != nil {
			b.Fatal(err)
		}
	poll:
		for {
			var d int64
			err := pc.QueryRow(context.Background(), "SELECT coalesce(sum(rows_done), 0) FROM "+to+"_progress").Scan(&d)
			if err == nil && d >= int64(rows/2) {
				break poll
			}
			select {
			case err := <-exited:
				b.Fatalf("the run ended (%v) before half the rows: %s", err, errOut.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
		pc.Close(context.Background())
		_ = cmd.Process.Kill()
		<-exited
		benchRun(b, env, nil, table(to, urls[0])...)
		resume = append(resume, time.Since(start).Seconds()/base[len(base)-1])
		check(to, "bytea")
	}
	serverRSS := vmKiB(b, servers[0].Cmd.Process.Pid, "VmHWM") / 1024
	server2RSS := vmKiB(b, servers[1].Cmd.Process.Pid, "VmHWM") / 1024
	fieldsPerSec := apptest.Median(one) * float64(fields) / float64(rows)
	results := []struct {
		name  string
		value float64
	}{
		{"rows", float64(rows)},
		{"fields", float64(fields)},
		{"decrypt-table_rows/s", apptest.Median(one)},
		{"psql_pipeline_rows/s", apptest.Median(pipe)},
		{"ratio_vs_pipeline(goal>=2)", apptest.Median(one) / apptest.Median(pipe)},
		{"decrypt-table_fields/s", fieldsPerSec},
		{"inprocess_fields/s", apptest.Median(inproc)},
		{"ratio_vs_inprocess(goal>=0.3)", fieldsPerSec / apptest.Median(inproc)},
		{"two_servers_two_workers_rows/s", apptest.Median(two)},
		{"resume_total/uninterrupted(goal<=1.1)", apptest.Median(resume)},
		{"decrypt-table_cpu_us/row", apptest.Median(tableCPU)},
		{"psql_pipeline_cpu_us/row", apptest.Median(pipeCPU)},
		{"cpu_ratio_pipeline/decrypt-table", apptest.Median(pipeCPU) / apptest.Median(tableCPU)},
		{"client_cpu_us/row", apptest.Median(clientRow)},
		{"server_cpu_us/row", apptest.Median(serverRow)},
		{"postgres_cpu_us/row", apptest.Median(pgRow)},
		{"inprocess_cpu_us/field", apptest.Median(inprocCPU)},
		{"decrypt-table_cpu_us/field", apptest.Median(tableCPU) * float64(rows) / float64(fields)},
		{"client_cores", apptest.Median(clientCPU)},
		{"server_cores", apptest.Median(serverCPU)},
		{"postgres_cores", apptest.Median(pgCPU)},
		{"client_peak_RSS_MiB(goal<64)", clientRSS},
		{"client_two_workers_peak_RSS_MiB", twoRSS},
		{"server_peak_RSS_MiB(goal<64)", max(serverRSS, server2RSS)},
		{"load_average_1min_at_start", load0},
		{"load_average_1min_at_end", loadAverage(b)},
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\n`BenchmarkDecryptTable` (`app/e2e`), %d rows, %d fields, %s UTC:\n\n| figure | value |\n|---|---|\n", rows, fields, time.Now().UTC().Format("2006-01-02 15:04"))
	for _, r := range results {
		b.ReportMetric(r.value, r.name)
		fmt.Fprintf(&md, "| %s | %.2f |\n", r.name, r.value)
	}
	fmt.Print(md.String())
	if path := os.Getenv("IDVAULT_BENCH_EXIT_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(md.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
