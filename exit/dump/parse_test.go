package dump_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump"
)

type parsed struct {
	SQL  string
	Line int
	Data string // COPY data, "" for a statement
	Copy bool
}

func parseAll(t testing.TB, script string) ([]parsed, error) {
	p := dump.NewParser(strings.NewReader(script))
	var out []parsed
	for {
		it, err := p.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		x := parsed{SQL: strings.TrimSpace(it.SQL), Line: it.Line}
		if it.Copy != nil {
			b, err := io.ReadAll(it.Copy)
			if err != nil {
				return out, err
			}
			x.Data, x.Copy = string(b), true
		}
		out = append(out, x)
	}
}

func TestParserSplitsLikePsql(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   []parsed
	}{
		{"statements and comments", "-- a comment; not a statement\nCREATE TABLE a (x int);\n\n/* block; */ SELECT 1;\n",
			[]parsed{{SQL: "-- a comment; not a statement\nCREATE TABLE a (x int)", Line: 2}, {SQL: "/* block; */ SELECT 1", Line: 4}}},
		{"two statements on one line", "SELECT 1; SELECT 2;\nSELECT 3;",
			[]parsed{{SQL: "SELECT 1", Line: 1}, {SQL: "SELECT 2", Line: 1}, {SQL: "SELECT 3", Line: 2}}},
		{"semicolons inside quotes", "SELECT 'a;b', \"c;d\", E'e\\';f', $$g;h$$, $t$i;$$;j$t$;\n",
			[]parsed{{SQL: `SELECT 'a;b', "c;d", E'e\';f', $$g;h$$, $t$i;$$;j$t$`, Line: 1}}},
		{"doubled quote", "SELECT 'it''s; fine';", []parsed{{SQL: "SELECT 'it''s; fine'", Line: 1}}},
		{"nested block comment", "/* a /* b; */ c; */ SELECT 1;", []parsed{{SQL: "/* a /* b; */ c; */ SELECT 1", Line: 1}}},
		{"multi-line statement", "CREATE INDEX i\n  ON t (x);\n", []parsed{{SQL: "CREATE INDEX i\n  ON t (x)", Line: 1}}},
		{"copy block", "COPY t (a, b) FROM stdin;\n1\t\\\\x00\n2\t\\N\n\\.\nSELECT 1;\n",
			[]parsed{{SQL: "COPY t (a, b) FROM stdin", Line: 1, Data: "1\t\\\\x00\n2\t\\N\n", Copy: true}, {SQL: "SELECT 1", Line: 5}}},
		{"copy with CRLF and lower case", "copy t from STDIN;\r\n1\r\n\\.\r\n",
			[]parsed{{SQL: "copy t from STDIN", Line: 1, Data: "1\r\n", Copy: true}}},
		{"empty copy, terminator at end of file", "COPY t (a) FROM stdin;\n\\.",
			[]parsed{{SQL: "COPY t (a) FROM stdin", Line: 1, Copy: true}}},
		{"copy to stdout is a statement", "COPY t TO stdout;\n", []parsed{{SQL: "COPY t TO stdout", Line: 1}}},
		{"dollar parameter is no quote", "SELECT $1;", []parsed{{SQL: "SELECT $1", Line: 1}}},
		{"empty statements", ";;\n;SELECT 1;", []parsed{{SQL: "SELECT 1", Line: 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAll(t, tc.script)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParserErrorsCarryTheLine(t *testing.T) {
	cases := []struct {
		name, script string
		line         int
		msg          string
	}{
		{"unterminated copy", "SELECT 1;\nCOPY t FROM stdin;\n1\n2\n", 3, `not ended by its closing line (\. alone)`},
		{"unterminated string", "SELECT 1;\nSELECT 'abc;\n\n", 2, "unterminated quoted string"},
		{"unterminated comment", "SELECT 1;\n\n/* abc\n", 3, "unterminated /* comment"},
		{"missing semicolon", "SELECT 1;\nSELECT 2\n", 2, "not ended by a semicolon"},
		{"meta-command", "SELECT 1;\n\\connect other\n", 2, "psql meta-command"},
		{"text after copy", "COPY t FROM stdin; SELECT 1;\n\\.\n", 1, "text after COPY"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAll(t, tc.script)
			var pe *dump.ParseError
			require.True(t, errors.As(err, &pe), "error %v", err)
			require.Equal(t, tc.line, pe.Line)
			require.Contains(t, pe.Msg, tc.msg)
		})
	}
}

// The parser and CheckStatement read SQL with one scanner, as PostgreSQL does: a line comment
// ends at a carriage return too, so what follows it is a statement, checked like any other,
// and an unterminated string is named by the line it opens on.
func TestParserReadsCommentsAsPostgreSQLDoes(t *testing.T) {
	got, err := parseAll(t, "-- a comment\rDROP TABLE users;\n")
	require.NoError(t, err)
	require.Equal(t, []parsed{{SQL: "-- a comment\rDROP TABLE users", Line: 1}}, got)
	_, err = dump.CheckStatement("-- a comment\rDROP TABLE users")
	require.ErrorContains(t, err, "DROP is not a statement of an exit dump")

	_, err = parseAll(t, "SELECT 1;\nSELECT 'a\n''b;\n")
	var pe *dump.ParseError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 2, pe.Line)
	require.Contains(t, pe.Msg, "unterminated quoted string")
}

// TestParserSkipsUnreadCopyData: Next moves past COPY data the caller did not read.
func TestParserSkipsUnreadCopyData(t *testing.T) {
	p := dump.NewParser(strings.NewReader("COPY t FROM stdin;\n" + strings.Repeat("row\n", 10000) + "\\.\nSELECT 2;\n"))
	it, err := p.Next()
	require.NoError(t, err)
	require.NotNil(t, it.Copy)
	it, err = p.Next()
	require.NoError(t, err)
	require.Equal(t, "SELECT 2", it.SQL)
	require.Equal(t, 10003, it.Line)
}

// TestParserStreamsLongCopyLines: a COPY row longer than the parser's buffer passes whole.
func TestParserStreamsLongCopyLines(t *testing.T) {
	long := strings.Repeat("ab", 3<<20)
	got, err := parseAll(t, "COPY t FROM stdin;\n"+long+"\n\\.\n")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, long+"\n", got[0].Data)
}

// FuzzParser: no input makes the parser panic or loop; items come in line order, and no
// COPY data holds its terminator line.
// pg_dump's \restrict and \unrestrict lines are skipped (they only restrict psql's own
// meta-commands); every other backslash command is still refused.
func TestParserSkipsPgDumpRestrictLines(t *testing.T) {
	got, err := parseAll(t, "--\n\\restrict Abc123\nSET a = 1;\n\\unrestrict Abc123\r\n")
	require.NoError(t, err)
	require.Equal(t, []parsed{{SQL: "SET a = 1", Line: 3}}, got)
	for _, script := range []string{"\\restrict\n", "\\restrict a b\n", "\\restrictx a\n", "\\! touch x\n", "\\restrict a;b\n"} {
		_, err := parseAll(t, script)
		var pe *dump.ParseError
		require.ErrorAs(t, err, &pe, "%q", script)
		require.Contains(t, pe.Msg, "meta-command")
	}
}

func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE a (x int);\nCOPY a (x) FROM stdin;\n1\n\\.\nALTER TABLE a ADD PRIMARY KEY (x);\n",
		"SELECT 'a;b', $t$x$t$; /* c /* d */ */ SELECT E'\\'';",
		"COPY t FROM stdin;\r\n\\.\r\n",
		"-- only a comment",
		"COPY t FROM stdin;\nno end",
		"$$", "'", "\"", "/*", "\\x",
		"\\restrict abc\nSET x = 1;\n\\unrestrict abc\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := dump.NewParser(bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		last := 0
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more items than input bytes")
			}
			it, err := p.Next()
			if err != nil {
				return
			}
			if it.Line < last || it.Line < 1 || it.Line > lines {
				t.Fatalf("item at line %d after line %d (%d lines)", it.Line, last, lines)
			}
			last = it.Line
			if strings.TrimSpace(it.SQL) == "" {
				t.Fatalf("empty statement")
			}
			if it.Copy != nil {
				b, err := io.ReadAll(it.Copy)
				if err != nil {
					return
				}
				for _, l := range strings.Split(string(b), "\n") {
					if strings.TrimSuffix(l, "\r") == `\.` {
						t.Fatalf("COPY data holds its terminator")
					}
				}
			}
		}
	})
}
