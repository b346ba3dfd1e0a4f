package dump_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/pgtest"
)

// pgDumpLines are statements pg_dump writes for a database holding an exit dump (15.x, and
// the older and newer settings of other versions).
var pgDumpLines = []string{
	"SET statement_timeout = 0",
	"SET lock_timeout = 0",
	"SET idle_in_transaction_session_timeout = 0",
	"SET transaction_timeout = 0",
	"SET client_encoding = 'UTF8'",
	"SET standard_conforming_strings = on",
	"SELECT pg_catalog.set_config('search_path', '', false)",
	"SET check_function_bodies = false",
	"SET xmloption = content",
	"SET client_min_messages = warning",
	"SET row_security = off",
	"SET default_tablespace = ''",
	"SET default_table_access_method = heap",
	"SET default_with_oids = false",
	"--\n-- Name: users; Type: TABLE; Schema: public; Owner: postgres\n--\n\nCREATE TABLE public.users (\n    trustchain_id bytea NOT NULL,\n" +
		"    user_id bytea NOT NULL,\n    encrypted_verification_key_for_user_secret bytea,\n    created_at timestamp with time zone NOT NULL\n)",
	"ALTER TABLE public.users OWNER TO postgres",
	"ALTER TABLE public.users OWNER TO \"Exit Operator\"",
	"COPY public.users (trustchain_id, user_id, encrypted_verification_key_for_user_secret, created_at) FROM stdin",
	"ALTER TABLE ONLY public.devices\n    ADD CONSTRAINT devices_pkey PRIMARY KEY (trustchain_id, device_id)",
	"CREATE INDEX devices_user ON public.devices USING btree (trustchain_id, user_id)",
	`CREATE INDEX "Odd name" ON "public"."key_publishes" (trustchain_id, resource_id)`,
	"/* a /* nested */ comment */ ALTER TABLE trustchains ADD PRIMARY KEY (id) -- trailing",
}

// Every statement of the dump's own files and of pg_dump's output is allowed, with its kind.
func TestCheckStatementAllowsExitDumps(t *testing.T) {
	var stmts []string
	for _, script := range []string{dump.SchemaSQL, dump.IndexesSQL} {
		items, err := parseAll(t, script)
		require.NoError(t, err)
		for _, it := range items {
			stmts = append(stmts, it.SQL)
		}
	}
	require.Len(t, stmts, 9+12)
	stmts = append(stmts, pgDumpLines...)
	for _, sql := range stmts {
		st, err := dump.CheckStatement(sql)
		require.NoError(t, err, sql)
		require.NotZero(t, st.Kind, sql)
	}
	st, err := dump.CheckStatement("COPY key_publishes (trustchain_id, resource_id) FROM STDIN")
	require.NoError(t, err)
	require.Equal(t, dump.Statement{Kind: dump.StmtCopy, Table: "key_publishes"}, st)
}

// hostile are statements a dump must never run, with a part of the reason given.
var hostile = []struct{ sql, why string }{
	{"COPY (SELECT 1) TO PROGRAM 'touch /tmp/x'", "COPY of a query"},
	{"COPY users (user_id) TO PROGRAM 'touch /tmp/x'", "COPY ... TO"},
	{"COPY users (user_id) TO '/tmp/x'", "COPY ... TO"},
	{"COPY users (user_id) FROM '/etc/passwd'", "COPY from a file or a program"},
	{"COPY users (user_id) FROM PROGRAM 'id'", "COPY from a file or a program"},
	{"COPY users (user_id) FROM stdin WITH (FORMAT csv)", "with options"},
	{"COPY users FROM stdin", "list of columns"},
	{"COPY pg_authid (rolname) FROM stdin", `table "pg_authid" is not a table of an exit dump (exit/dump/FORMAT.md)`},
	{"COPY users (user_id, oid) FROM stdin", `column "oid" is not a column of users`},
	{"COPY other.users (user_id) FROM stdin", "table name"},
	{"DROP TABLE users", "DROP is not a statement of an exit dump"},
	{"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql", "CREATE of anything but a table or an index"},
	{"CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "CREATE of anything"},
	{"DO $$ BEGIN PERFORM pg_sleep(1); END $$", "DO is not a statement"},
	{"CREATE TABLE users (x bytea) AS $$x$$", "dollar quoting"},
	{"DO 'BEGIN NULL; END'", "DO is not a statement"},
	{"SELECT pg_read_file('/etc/passwd')", "set_config('search_path'"},
	{"SELECT pg_catalog.set_config('search_path', 'evil', false)", "set_config('search_path'"},
	{"SELECT set_config('search_path', '', false), pg_sleep(10)", "text after the end"},
	{"SET role postgres", "SET role is not a setting pg_dump writes"},
	{"SET session_authorization = 'postgres'", "SET session_authorization"},
	{"SET search_path = evil", "SET search_path"},
	{"SET client_encoding = 'SJIS'", "client_encoding: only utf8"},
	{"SET standard_conforming_strings = off", "only on or true"},
	{"SET default_table_access_method = evil", "only heap"},
	{"SET statement_timeout = 0, lock_timeout", "text after the end"},
	{"SET statement_timeout = E'0'", "prefixed string"},
	{"SET default_tablespace = 'x\\'", "backslash"},
	{"CREATE TABLE evil (x bytea)", `table "evil" is not a table of an exit dump (exit/dump/FORMAT.md)`},
	{"CREATE TABLE trustchains (id bytea NOT NULL DEFAULT pg_read_binary_file('/etc/passwd'), public_signature_key bytea NOT NULL, root_block bytea NOT NULL, created_at timestamptz NOT NULL)",
		"only NOT NULL or NULL may follow"},
	{"CREATE TABLE trustchains (id bytea, public_signature_key bytea, root_block bytea, created_at text)", "column created_at is text, an exit dump has timestamptz (exit/dump/FORMAT.md)"},
	{"CREATE TABLE trustchains (id bytea, public_signature_key bytea, root_block bytea)", "3 columns, an exit dump has 4 (exit/dump/FORMAT.md)"},
	{"CREATE TABLE trustchains (id bytea, public_signature_key bytea, root_block bytea, created_at timestamptz, extra bytea)", `column "extra" is not a column of trustchains in an exit dump (exit/dump/FORMAT.md)`},
	{"CREATE TABLE trustchains (id bytea, id bytea)", "defined twice"},
	{"CREATE TABLE trustchains (LIKE users)", "only the types bytea"},
	{"CREATE TABLE trustchains AS SELECT 1", "column definitions"},
	{"CREATE UNLOGGED TABLE trustchains (id bytea)", "CREATE of anything but"},
	{"ALTER TABLE users ADD CONSTRAINT c CHECK (pg_sleep(1) IS NULL)", "ADD of anything but a PRIMARY KEY"},
	{"ALTER TABLE users ADD CONSTRAINT c FOREIGN KEY (user_id) REFERENCES devices (device_id)", "ADD of anything but a PRIMARY KEY"},
	{"ALTER TABLE users ADD PRIMARY KEY (user_id) INCLUDE (created_at)", "text after the end"},
	{"ALTER TABLE users ENABLE ROW LEVEL SECURITY", "other than ADD PRIMARY KEY or OWNER TO"},
	{"ALTER TABLE users OWNER TO postgres, ADD COLUMN x int", "text after the end"},
	{"ALTER ROLE postgres PASSWORD 'x'", "ALTER of anything but a table"},
	{"CREATE INDEX i ON users ((lower(encode(user_id, 'hex'))))", "only column names"},
	{"CREATE INDEX i ON users (user_id) WHERE pg_sleep(1) IS NULL", "text after the end"},
	{"CREATE INDEX i ON users USING gin (user_id)", "only btree"},
	{"CREATE INDEX CONCURRENTLY i ON users (user_id)", "CREATE INDEX must be"},
	{"CREATE INDEX ON users (user_id)", "CREATE INDEX must be"},
	{"CREATE INDEX i ON users (user_id); DROP TABLE users", "a second statement"},
	{"CREATE INDEX i ON users (user_id) -- fine\n; DROP TABLE users", "a second statement"},
	{"GRANT ALL ON users TO PUBLIC", "GRANT is not a statement"},
	{"COMMIT", "COMMIT is not a statement"},
	{"VACUUM", "VACUUM is not"},
	{"LOAD '/tmp/evil.so'", "LOAD is not"},
	{"CALL p()", "CALL is not"},
	{"\\! touch /tmp/x", "character"},
	{"CREATE INDEX i ON users (user_id) /* unterminated", "unterminated /* comment"},
	{`CREATE INDEX "i ON users (user_id)`, "unterminated quoted identifier"},
	{`CREATE INDEX "" ON users (user_id)`, "empty quoted identifier"},
	{"SET lock_timeout = 1.5", "whole numbers"},
	{"SET lock_timeout = 0x10", "whole numbers"},
	{"CREATE INDEX i ON users (user_id) + 1", "not allowed"},
	{"CREATE INDEX i ON users (usér_id)", "non-ASCII"},
	{"", "an empty statement"},
	{"CREATE INDEX i ON users (user_id) -- \x00 DROP TABLE users", "NUL byte"},
	{"-- only a comment", "an empty statement"},
	{"(SELECT 1)", "must start with a keyword"},
}

func TestCheckStatementRefusesEverythingElse(t *testing.T) {
	for _, tc := range hostile {
		_, err := dump.CheckStatement(tc.sql)
		require.ErrorIs(t, err, dump.ErrRefused, "%q was allowed", tc.sql)
		require.ErrorContains(t, err, tc.why, tc.sql)
		var re *dump.RefusedError
		require.ErrorAs(t, err, &re)
	}
}

// hostileDump copies the shared dump and writes sql into file at its end: the files before it
// are sound, so a loader that runs statements as it reads them would have loaded them.
func hostileDump(t *testing.T, file, sql string) (dir string, line int) {
	t.Helper()
	dir = copyDump(t)
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	line = strings.Count(string(b), "\n") + 1
	require.NoError(t, os.WriteFile(path, append(b, sql+"\n"...), 0o644))
	return dir, line
}

// A dump holding a statement that is not part of an exit dump is refused before anything
// runs: the error names the file and the line, the program is never run, the database is
// untouched.
func TestLoadRefusesHostileDumpsBeforeRunningAnything(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	// The PostgreSQL server runs as another OS user: it may write only where anyone may.
	shared := filepath.Join(os.TempDir(), fmt.Sprintf("idvault-hostile-%d", os.Getpid()))
	t.Cleanup(func() { _ = os.Remove(shared) })
	cases := []struct {
		name, file, sql, why string
		lineOffset           int
	}{
		{"copy to program", dump.IndexesFile, "COPY (SELECT 1) TO PROGRAM 'touch " + shared + "';", "COPY of a query", 0},
		{"copy table to program", dump.DataFile, "COPY users (user_id) TO PROGRAM 'touch " + shared + "';", "COPY ... TO", 0},
		{"copy from a file", dump.IndexesFile, "COPY users (user_id) FROM '/etc/passwd';", "COPY from a file", 0},
		{"drop", dump.IndexesFile, "DROP TABLE users;", "DROP is not", 0},
		{"create function", dump.IndexesFile, "CREATE FUNCTION f() RETURNS int\n  AS $$ SELECT 1 $$ LANGUAGE sql;", "CREATE of anything", 0},
		{"do block", dump.IndexesFile, "DO $$ BEGIN PERFORM pg_sleep(0); END $$;", "DO is not a statement", 0},
		{"second statement on a line", dump.IndexesFile,
			"CREATE INDEX extra ON users (user_id); COPY (SELECT 1) TO PROGRAM 'touch " + shared + "';", "COPY of a query", 0},
		{"after comments", dump.SchemaFile, "-- looks harmless\n/* still */\nSELECT pg_read_file('" + marker + "');", "set_config", 2},
		{"psql meta-command", dump.IndexesFile, "\\! touch " + shared, "meta-command", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, line := hostileDump(t, tc.file, tc.sql)
			dsn := pgtest.NewDB(t)
			progressed := false
			sum, err := dump.Load(context.Background(), dsn, dir, func(string, int64, int64) { progressed = true })
			var le *dump.LoadError
			require.ErrorAs(t, err, &le)
			require.Equal(t, tc.file, le.File)
			require.Equal(t, line+tc.lineOffset, le.Line, "%v", err)
			require.ErrorContains(t, err, tc.why)
			require.ErrorContains(t, err, tc.file+" line ")
			if tc.name != "psql meta-command" {
				require.ErrorIs(t, err, dump.ErrRefused)
				require.ErrorContains(t, err, "nothing was run")
			}
			require.True(t, progressed)
			require.Empty(t, sum.Files)
			require.Zero(t, sum.Statements)
			require.Empty(t, userTables(t, connect(t, dsn)), "the database is untouched")
			_, err = os.Stat(shared)
			require.ErrorIs(t, err, os.ErrNotExist, "the program ran")
		})
	}
}

// A real pg_dump of a database that load-dump filled (plain format, default options: owner,
// \restrict, public. names, ALTER TABLE ONLY ... ADD CONSTRAINT) loads again with load-dump,
// into an identical database.
func TestPgDumpOfALoadedDumpLoadsAgain(t *testing.T) {
	ctx := context.Background()
	d := dumptest.Shared(t)
	first := d.Load(t)
	for _, args := range [][]string{nil, {"--no-owner", "--no-privileges"}} {
		out, err := exec.Command(pgtest.Bin(t, "pg_dump"), append(args, first)...).Output()
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "1_pg_dump.sql"), out, 0o600))
		second := pgtest.NewDB(t)
		sum, err := dump.Load(ctx, second, dir, nil)
		require.NoError(t, err, "pg_dump %v", args)
		require.Equal(t, []string{"1_pg_dump.sql"}, sum.Files)
		a, b := connect(t, first), connect(t, second)
		require.Equal(t, tableDigests(t, a), tableDigests(t, b))
		require.Equal(t, indexes(t, a), indexes(t, b))
		require.Equal(t, userTables(t, a), userTables(t, b))
	}
}

// indexes lists the index definitions of the public schema.
func indexes(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1")
	require.NoError(t, err)
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, defs, 12)
	return defs
}

// FuzzCheckStatement checks that the checker never panics, and that whatever it allows, the
// splitter reads as exactly that one statement (with COPY data after it exactly when the
// checker says COPY ... FROM stdin): the two never disagree on what is sent to the server.
func FuzzCheckStatement(f *testing.F) {
	for _, s := range pgDumpLines {
		f.Add(s)
	}
	for _, h := range hostile {
		f.Add(h.sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := dump.CheckStatement(sql)
		if err != nil {
			require.ErrorIs(t, err, dump.ErrRefused)
			return
		}
		require.NotZero(t, st.Kind)
		script := sql + "\n;\n"
		if st.Kind == dump.StmtCopy {
			script += "\\.\n"
		}
		p := dump.NewParser(strings.NewReader(script))
		it, err := p.Next()
		require.NoError(t, err, "allowed %q, which the splitter cannot read", sql)
		require.Equal(t, sql+"\n", it.SQL, "the splitter cut an allowed statement")
		require.Equal(t, st.Kind == dump.StmtCopy, it.Copy != nil, "COPY data after %q", sql)
		if it.Copy != nil {
			data, err := io.ReadAll(it.Copy)
			require.NoError(t, err)
			require.Empty(t, data)
		}
		_, err = p.Next()
		require.True(t, errors.Is(err, io.EOF), "more after %q: %v", sql, err)
	})
}
