package cli

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/exitdb"
)

// dbFlag registers --db for the commands that connect to the exit database themselves
// (load-dump, forget) and returns how to read it: the flag, else IDVAULT_EXIT__DB, which keeps
// a password out of the process list. An empty --db is refused, not taken for the variable.
func dbFlag(c *cmdline, what string) func() string {
	db := c.String("db", "", "PostgreSQL connection string `DSN` "+what+" (or IDVAULT_EXIT__DB, which keeps a password off the command line)")
	c.nonEmpty("db")
	return func() string { return cmp.Or(*db, c.p.getenv("IDVAULT_EXIT__DB")) }
}

// openExitDB opens the restored dump for the exit server: it checks the dump's tables and the
// app's trustchains row, and creates the exit_* tables if missing.
func openExitDB(ctx context.Context, c config.Exit) (exitserver.DB, func(), error) {
	appID, err := decodeAppID(c.AppID)
	if err != nil {
		return nil, nil, err
	}
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := exitdb.Open(octx, exitdb.Config{DSN: c.DB, AppID: appID, KeyCacheSize: c.KeyCache})
	if err != nil {
		return nil, nil, fmt.Errorf("exit: open the database: %w", err)
	}
	return db, db.Close, nil
}

func decodeAppID(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, fmt.Errorf("exit: the app ID is not the base64 of 32 bytes")
}
