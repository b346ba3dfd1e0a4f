package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Query runs sql on the database dsn (NewDB's) and returns its rows, each as pgx's Go values
// (nil for NULL); a statement without rows returns none. An error fails tb, naming sql.
func Query(tb testing.TB, dsn, sql string) [][]any {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatalf("%s: %v", sql, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return out
}
