package table_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/pgtest"
	"github.com/idvault/idvault/exit/table"
)

// fakeDecrypter "decrypts" ciphertexts "ct:" || clear; any other ciphertext fails with
// decryption_failed. stopAfter, when positive, makes the call after that many fail for the
// batch as a whole (a server gone).
type fakeDecrypter struct {
	calls     atomic.Int64
	stopAfter int64
}

var errGone = errors.New("every exit server gone")

func (f *fakeDecrypter) Decrypt(_ context.Context, cts [][]byte, each func(int, table.Result)) error {
	if n := f.calls.Add(1); f.stopAfter > 0 && n > f.stopAfter {
		return errGone
	}
	// From the last item to the first, and each clear value in a buffer overwritten once
	// handed on, as a Decrypter may.
	scratch := make([]byte, 0, 64)
	for i := len(cts) - 1; i >= 0; i-- {
		if plain, ok := bytes.CutPrefix(cts[i], []byte("ct:")); ok {
			scratch = append(scratch[:0], plain...)
			each(i, table.Result{Clear: scratch})
			clear(scratch) // the value is gone once handed on
		} else {
			each(i, table.Result{Code: "decryption_failed", Message: "the ciphertext does not decrypt"})
		}
	}
	return nil
}

func decodeBase64(dst, text []byte) ([]byte, error) {
	out, err := base64.StdEncoding.AppendDecode(dst, text)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func exec(t *testing.T, dsn string, sqls ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for _, s := range sqls {
		_, err := conn.Exec(context.Background(), s)
		require.NoError(t, err, s)
	}
}

// query runs sql on dsn and returns its rows, one line each, values separated by spaces.
func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	var lines []string
	for _, vals := range pgtest.Query(t, dsn, sql) {
		lines = append(lines, strings.TrimSuffix(fmt.Sprintln(vals...), "\n"))
	}
	return strings.Join(lines, "\n")
}

// source makes the source table: n rows keyed 1..n, a base64 text field, a bytea field, and
// other columns of several types; every 7th text field fails, every 5th is NULL, every 11th
// empty.
func source(t *testing.T, n int) string {
	dsn := pgtest.NewDB(t)
	exec(t, dsn, `CREATE TYPE mood AS ENUM ('sad', 'ok')`,
		`CREATE TABLE msgs (id bigint PRIMARY KEY, note text, body text, blob bytea, at timestamptz, tags text[], m mood, amount numeric(10,2))`,
		fmt.Sprintf(`INSERT INTO msgs SELECT i, 'note ' || i,
			CASE WHEN i %% 5 = 0 THEN NULL WHEN i %% 11 = 0 THEN '' WHEN i %% 7 = 0 THEN encode(convert_to('bad' || i, 'UTF8'), 'base64')
			     ELSE encode(convert_to('ct:clear é ' || i || repeat('x', i %% 300), 'UTF8'), 'base64') END,
			CASE WHEN i %% 3 = 0 THEN NULL ELSE convert_to('ct:' || i, 'UTF8') || '\x00ff'::bytea END,
			'2020-01-01'::timestamptz + i * interval '1 minute', ARRAY['a', i::text], CASE WHEN i %% 2 = 0 THEN 'ok' ELSE 'sad' END::mood, i / 100.0
			FROM generate_series(1, %d) i`, n))
	return dsn
}

// want is what the destination must hold, computed by PostgreSQL from the source.
const wantSQL = `SELECT id, note,
	CASE WHEN body IS NULL THEN 'NULL' WHEN body = '' THEN 'EMPTY' WHEN id %% 7 = 0 THEN 'NULL' ELSE substr(convert_from(decode(body, 'base64'), 'UTF8'), 4) END,
	CASE WHEN blob IS NULL THEN 'NULL' ELSE encode(substr(blob, 4), 'hex') END, at, tags, m::text, amount FROM %s ORDER BY id`

const gotSQL = `SELECT id, note, CASE WHEN body IS NULL THEN 'NULL' WHEN body = '' THEN 'EMPTY' ELSE convert_from(body, 'UTF8') END,
	CASE WHEN blob IS NULL THEN 'NULL' ELSE encode(blob, 'hex') END, at, tags, m::text, amount FROM %s ORDER BY id`

func options(from, to string, d table.Decrypter) table.Options {
	return table.Options{From: from, To: to, Table: "msgs", Key: "id", Fields: []string{"body", "blob"}, ToTable: "clear_msgs",
		Decode: decodeBase64, Decrypter: d, BatchRows: 50}
}

// A table into another database: every field decrypted byte for byte, failures NULL and
// keyed in the errors table, NULL and empty kept, the other columns as they were (an enum, an
// array, a timestamp, a numeric).
func TestDecryptTableIntoAnotherDatabase(t *testing.T) {
	t.Parallel()
	from, to := source(t, 700), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`)
	for _, workers := range []int{1, 3} {
		opts := options(from, to, &fakeDecrypter{})
		opts.Workers, opts.Restart = workers, true
		rep, err := table.Run(context.Background(), opts)
		require.NoError(t, err)
		require.EqualValues(t, 700, rep.Rows)
		require.EqualValues(t, 700/7-700/35-700/77+700/385, rep.Failed, "every 7th body that is neither NULL nor empty")
		require.Equal(t, query(t, from, fmt.Sprintf(wantSQL, "msgs")), query(t, to, fmt.Sprintf(gotSQL, "clear_msgs")))
		require.Equal(t, fmt.Sprint(rep.Failed), query(t, to, `SELECT count(*) FROM clear_msgs_errors WHERE field = 'body' AND code = 'decryption_failed' AND key % 7 = 0`))
		require.Equal(t, "bytea bytea", query(t, to, `SELECT pg_typeof(body)::text, pg_typeof(blob)::text FROM clear_msgs LIMIT 1`))
	}
}

// A run stopped after some batches (every server gone) and run again writes exactly the rows of
// an uninterrupted run, each once.
func TestDecryptTableResumes(t *testing.T) {
	t.Parallel()
	from, to := source(t, 1000), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`)
	for _, stop := range []int64{1, 4, 9} {
		opts := options(from, to, &fakeDecrypter{stopAfter: stop})
		opts.Workers = 2
		_, err := table.Run(context.Background(), opts)
		require.ErrorIs(t, err, errGone)
	}
	done := query(t, to, `SELECT count(*) FROM clear_msgs`)
	require.NotEqual(t, "0", done)
	require.NotEqual(t, "1000", done)
	opts := options(from, to, &fakeDecrypter{})
	opts.Workers = 2
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.True(t, rep.Resumed)
	require.EqualValues(t, 1000, rep.Rows)
	require.Less(t, rep.ThisRun, int64(1000))
	require.Equal(t, query(t, from, fmt.Sprintf(wantSQL, "msgs")), query(t, to, fmt.Sprintf(gotSQL, "clear_msgs")))
	require.Equal(t, fmt.Sprint(rep.Failed), query(t, to, `SELECT count(*) FROM clear_msgs_errors`))

	// Done: a rerun writes nothing more.
	rep, err = table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.Zero(t, rep.ThisRun)
	require.EqualValues(t, 1000, rep.Rows)
}

// A destination that does not fit, a different command on a destination holding a run's
// progress, and a destination holding other rows are refused before anything is written;
// --restart starts over.
func TestDecryptTableRefusals(t *testing.T) {
	t.Parallel()
	from, to := source(t, 100), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`,
		`CREATE TABLE wrong (id bigint, note text, body text, blob bytea, at timestamptz, tags text[], m mood)`)
	opts := options(from, to, &fakeDecrypter{})
	opts.ToTable = "wrong"
	_, err := table.Run(context.Background(), opts)
	var cfg *table.ConfigError
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "column body is text, not bytea")
	require.Contains(t, err.Error(), "no column amount (numeric(10,2))")
	require.Equal(t, "0", query(t, to, `SELECT count(*) FROM wrong`))
	require.Equal(t, "false", query(t, to, `SELECT to_regclass('wrong_progress') IS NOT NULL`), "nothing created")

	opts = options(from, to, &fakeDecrypter{})
	_, err = table.Run(context.Background(), opts)
	require.NoError(t, err)
	other := opts
	other.Fields = []string{"body"}
	_, err = table.Run(context.Background(), other)
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "holds the progress of another command")
	other.Restart = true
	rep, err := table.Run(context.Background(), other)
	require.NoError(t, err)
	require.EqualValues(t, 100, rep.ThisRun)
	require.Equal(t, "100", query(t, to, `SELECT count(*) FROM clear_msgs`))
	require.Equal(t, "0", query(t, to, `SELECT count(*) FROM clear_msgs_errors WHERE field = 'blob'`))

	exec(t, to, `CREATE TABLE clear_other (LIKE clear_msgs)`, `INSERT INTO clear_other SELECT * FROM clear_msgs LIMIT 1`)
	opts.ToTable = "clear_other"
	_, err = table.Run(context.Background(), opts)
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "holds rows that no decrypt-table run wrote")

	for name, mod := range map[string]func(*table.Options){
		"no such key":             func(o *table.Options) { o.Key = "nope" },
		"no such field":           func(o *table.Options) { o.Fields = []string{"nope"} },
		"field of the wrong type": func(o *table.Options) { o.Fields = []string{"at"} },
		"key not unique":          func(o *table.Options) { o.Key = "note" },
		"bad source DSN":          func(o *table.Options) { o.From = "postgres://nobody@127.0.0.1:1/x?connect_timeout=2" },
	} {
		o := options(from, to, &fakeDecrypter{})
		o.ToTable = "never"
		mod(&o)
		_, err := table.Run(context.Background(), o)
		require.ErrorAs(t, err, &cfg, name)
		require.Equal(t, "false", query(t, to, `SELECT to_regclass('never') IS NOT NULL`), name)
	}
}

// A batch the destination refuses (a CHECK constraint) stops the run, rolled back, named by
// its keys: its clear values are neither in the error nor in the server's log (the session's
// log_error_verbosity is terse: no DETAIL "Failing row contains").
func TestDecryptTableRefusedBatchLeavesNoClearBytes(t *testing.T) {
	t.Parallel()
	from, to := source(t, 100), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`,
		`CREATE TABLE clear_msgs (id bigint PRIMARY KEY, note text, body bytea, blob bytea, at timestamptz, tags text[], m mood, amount numeric(10,2),
			CONSTRAINT short_body CHECK (length(body) < 80))`)
	rep, err := table.Run(context.Background(), options(from, to, &fakeDecrypter{}))
	require.Error(t, err)
	require.Contains(t, err.Error(), "short_body")
	require.Contains(t, err.Error(), "refused the batch of keys ")
	require.NotContains(t, err.Error(), "clear é")
	require.NotContains(t, err.Error(), "Failing row")
	require.Less(t, rep.Rows, int64(100))
	log := pgtest.ServerLog(t)
	require.Contains(t, log, "short_body", "the refusal is in the log")
	require.NotContains(t, log, "clear é", "no clear value in the server log")
	require.NotContains(t, log, "Failing row contains")

	// The same refusal in a session left verbose puts the row in the log: what terse avoids.
	conn, err := pgx.Connect(context.Background(), to)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `INSERT INTO clear_msgs (id, body) VALUES (-1, convert_to('verbose-marker' || repeat('x', 100), 'UTF8'))`)
	require.ErrorContains(t, err, "short_body")
	require.Contains(t, pgtest.ServerLog(t), "verbose-marker", "a verbose session's refusal quotes the row")
}

// A destination role that may not set log_error_verbosity is told at the start.
func TestDecryptTableWarnsWithoutTerse(t *testing.T) {
	t.Parallel()
	from, to := source(t, 10), pgtest.NewDB(t)
	role := fmt.Sprintf("app_%d", time.Now().UnixNano())
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`, "CREATE ROLE "+role+" LOGIN", "GRANT ALL ON SCHEMA public TO "+role)
	opts := options(from, strings.Replace(to, "postgres@", role+"@", 1), &fakeDecrypter{})
	var warned []string
	opts.Warn = func(s string) { warned = append(warned, s) }
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.EqualValues(t, 10, rep.Rows)
	require.Len(t, warned, 1)
	require.Contains(t, warned[0], "log_error_verbosity")
	exec(t, to, "DROP OWNED BY "+role, "DROP ROLE "+role)
}

// Keys of other types, and a --query source: a uuid key split over three workers, a text key
// with a schema-qualified destination; a batch of a few rows so that ranges have many.
func TestDecryptTableKeysAndQuery(t *testing.T) {
	t.Parallel()
	from := source(t, 300)
	exec(t, from, `CREATE SCHEMA out`)
	for name, tc := range map[string]struct{ query, key, to, order string }{
		"uuid": {`SELECT md5(id::text)::uuid AS u, id, body FROM msgs`, "u", "clear_u", "u"},
		"text": {`SELECT 'k' || lpad(id::text, 4, '0') AS k, id, body FROM msgs`, "k", "out.clear_k", "k"},
	} {
		opts := table.Options{From: from, Query: tc.query, Key: tc.key, Fields: []string{"body"}, ToTable: tc.to,
			Decode: decodeBase64, Decrypter: &fakeDecrypter{}, BatchRows: 7, Workers: 3, ClearText: true}
		rep, err := table.Run(context.Background(), opts)
		require.NoError(t, err, name)
		require.EqualValues(t, 300, rep.Rows, name)
		want := query(t, from, `SELECT id, CASE WHEN body IS NULL THEN 'NULL' WHEN body = '' THEN 'EMPTY' WHEN id % 7 = 0 THEN 'NULL'
			ELSE substr(convert_from(decode(body, 'base64'), 'UTF8'), 4) END FROM msgs ORDER BY id`)
		got := query(t, from, `SELECT id, CASE WHEN body IS NULL THEN 'NULL' WHEN body = '' THEN 'EMPTY' ELSE body END FROM `+tc.to+` ORDER BY id`)
		require.Equal(t, want, got, name)
		require.Equal(t, "text", query(t, from, `SELECT pg_typeof(body)::text FROM `+tc.to+` LIMIT 1`), name)
		require.Equal(t, fmt.Sprint(rep.Failed), query(t, from, `SELECT count(*) FROM `+tc.to+`_errors`), name)
	}
}

// One run at a time on a destination: while another session holds its lock, a run is refused
// (after waiting LockWait), writing nothing.
func TestDecryptTableOneRunAtATime(t *testing.T) {
	t.Parallel()
	from, to := source(t, 20), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`)
	conn, err := pgx.Connect(context.Background(), to)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `SELECT pg_advisory_lock(hashtext('idvault decrypt-table ' || current_database() || ' ' || '"clear_msgs"'))`)
	require.NoError(t, err)
	opts := options(from, to, &fakeDecrypter{})
	opts.LockWait = 200 * time.Millisecond
	_, err = table.Run(context.Background(), opts)
	var cfg *table.ConfigError
	require.ErrorAs(t, err, &cfg)
	require.ErrorContains(t, err, table.ErrLocked.Error())
	require.Equal(t, "false", query(t, to, `SELECT to_regclass('clear_msgs') IS NOT NULL`))
	_, err = conn.Exec(context.Background(), `SELECT pg_advisory_unlock_all()`)
	require.NoError(t, err)
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.EqualValues(t, 20, rep.Rows)
}

// A fresh run splits the source on its count, not on a stale estimate: the ranges hold about
// the same number of rows.
func TestDecryptTableSplitsOnTheCount(t *testing.T) {
	t.Parallel()
	from := pgtest.NewDB(t)
	exec(t, from, `CREATE TABLE msgs (id bigint PRIMARY KEY, body bytea)`,
		`INSERT INTO msgs SELECT i, convert_to('ct:' || i, 'UTF8') FROM generate_series(1, 10) i`, `ANALYZE msgs`,
		`INSERT INTO msgs SELECT i, convert_to('ct:' || i, 'UTF8') FROM generate_series(11, 1000) i`)
	opts := table.Options{From: from, Table: "msgs", Key: "id", Fields: []string{"body"}, ToTable: "clear_msgs",
		Decode: decodeBase64, Decrypter: &fakeDecrypter{}, Workers: 2}
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.EqualValues(t, 1000, rep.Rows)
	require.Equal(t, "8 125 125", query(t, from, `SELECT count(*), min(rows_done), max(rows_done) FROM clear_msgs_progress`))
}

// An empty key or value read first in a batch stays empty (not NULL): the empty text key sorts
// first, and each batch of one row starts with it.
func TestDecryptTableEmptyFirstValues(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDB(t)
	exec(t, dsn, `CREATE TABLE words (k text PRIMARY KEY, body text)`,
		`INSERT INTO words VALUES ('', ''), ('a', encode('ct:clear a', 'base64')), ('b', '')`)
	opts := table.Options{From: dsn, Table: "words", Key: "k", Fields: []string{"body"}, ToTable: "clear_words",
		Decode: decodeBase64, Decrypter: &fakeDecrypter{}, BatchRows: 1}
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.EqualValues(t, 3, rep.Rows)
	require.Equal(t, "[] true\n[a] false\n[b] true", query(t, dsn, `SELECT '[' || k || ']', body = '' FROM clear_words ORDER BY k`))
}
