package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

const tableToken = "table-test-token-0123456789"

// tableWorld is a gen-dump dump served by real `idvault exit` processes with every identity
// imported, and the app's database (src) holding the dump's ciphertexts in a table msgs
// (id bigint primary key, file text, body text: base64, raw bytea: every other row, n int),
// copies times over (the multi-MiB ciphertext once), plus a NULL and an empty body; dst is
// another, empty database.
type tableWorld struct {
	dir      string
	src, dst string
	urls     []string
	servers  []*apptest.Proc
	rows     []tableRow
}

// tableRow is a row of msgs and what decrypting it must give.
type tableRow struct {
	id        int
	file      string
	body, raw []byte // ciphertexts; nil: NULL
	clearSHA  string // the manifest's SHA-256 of the clear bytes; "" for a failure
	code      string // the failure's code
}

func newTableWorld(t *testing.T, servers, copies int) *tableWorld {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the binary against PostgreSQL")
	}
	d := dumptest.New(t, gen.Options{Users: 8, Groups: 3, Resources: 60, DecoyApps: 1, Big: 1, Seed: 37})
	dumpDSN := d.Load(t)
	w := &tableWorld{dir: t.TempDir(), src: pgtest.NewDB(t), dst: pgtest.NewDB(t)}
	for range servers {
		port := apptest.FreePort(t)
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		w.urls = append(w.urls, url)
		w.servers = append(w.servers, apptest.StartBinary(t, "", []string{"IDVAULT_EXIT__TOKEN=" + tableToken}, url, "exit", "--db", dumpDSN,
			"--app-id", base64.StdEncoding.EncodeToString(d.App.ID), "--listen", "127.0.0.1:"+strconv.Itoa(port), "--log-level", "warn"))
	}
	f, err := os.Open(filepath.Join(d.Dir, dump.IdentitiesFile))
	require.NoError(t, err)
	ids, err := exitclient.ReadIdentities(f)
	f.Close()
	require.NoError(t, err)
	_, err = exitclient.New(w.urls[0], tableToken).Import(context.Background(), ids, exitclient.ImportOptions{})
	require.NoError(t, err)

	id := 0
	for c := range copies {
		for _, e := range d.Manifest {
			ct, err := os.ReadFile(d.File(e))
			require.NoError(t, err)
			if c > 0 && len(ct) >= 1<<20 {
				continue
			}
			id++
			r := tableRow{id: id * 3, file: e.File, body: ct, code: e.Expected}
			if id%2 == 0 {
				r.raw = ct
			}
			if e.Expected == dump.ExpectOK {
				r.clearSHA, r.code = e.SHA256, ""
			}
			w.rows = append(w.rows, r)
		}
	}
	w.rows = append(w.rows, tableRow{id: (id + 1) * 3, file: "null"}, tableRow{id: (id + 2) * 3, file: "empty", body: []byte{}})
	conn, err := pgx.Connect(context.Background(), w.src)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `CREATE TABLE msgs (id bigint PRIMARY KEY, file text NOT NULL, body text, raw bytea, n int)`)
	require.NoError(t, err)
	_, err = conn.CopyFrom(context.Background(), pgx.Identifier{"msgs"}, []string{"id", "file", "body", "raw", "n"},
		pgx.CopyFromSlice(len(w.rows), func(i int) ([]any, error) {
			r := w.rows[i]
			var body any
			if r.body != nil {
				body = base64.StdEncoding.EncodeToString(r.body)
			}
			return []any{r.id, r.file, body, r.raw, i}, nil
		}))
	require.NoError(t, err)
	return w
}

// tableSQL runs a query on dsn and returns its rows, one line each, columns separated by "|".
func tableSQL(t *testing.T, dsn, sql string) string {
	t.Helper()
	var lines []string
	for _, vals := range pgtest.Query(t, dsn, sql) {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
			if v == nil {
				parts[i] = "NULL"
			}
		}
		lines = append(lines, strings.Join(parts, "|"))
	}
	return strings.Join(lines, "\n")
}

var emptySHA = hex.EncodeToString(sha256.New().Sum(nil))

// check asserts that the destination table to holds exactly what decrypting msgs must give:
// every row once, each field's clear bytes byte for byte (by the manifest's SHA-256), a failed
// field NULL with its row in <to>_errors under its key and the manifest's code, NULL and empty
// kept, the other columns as they were. It returns the number of failed fields.
func (w *tableWorld) check(t *testing.T, to string) int {
	t.Helper()
	var want, wantErrs []string
	for i, r := range w.rows {
		field := func(name string, ct []byte) string {
			switch {
			case ct == nil:
				return "NULL"
			case len(ct) == 0:
				return emptySHA
			case r.code != "":
				wantErrs = append(wantErrs, fmt.Sprintf("%d|%s|%s", r.id, name, r.code))
				return "NULL"
			}
			return r.clearSHA
		}
		b := field("body", r.body)
		raw := field("raw", r.raw)
		want = append(want, fmt.Sprintf("%d|%s|%d|%s|%s", r.id, r.file, i, b, raw))
	}
	got := tableSQL(t, w.dst, `SELECT id, file, n, coalesce(encode(sha256(body), 'hex'), 'NULL'), coalesce(encode(sha256(raw), 'hex'), 'NULL') FROM `+to+` ORDER BY id`)
	require.Equal(t, strings.Join(want, "\n"), got, "the destination holds every row once, decrypted")
	gotErrs := tableSQL(t, w.dst, `SELECT key, field, code FROM `+to+`_errors ORDER BY key, field`)
	require.Equal(t, strings.Join(wantErrs, "\n"), gotErrs, "every failure keyed in the errors table")
	require.NotEmpty(t, wantErrs, "the dump's negative cases fail")
	return len(wantErrs)
}
