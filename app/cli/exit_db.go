package cli

import (
	"context"
	"errors"

	"idvault/app/config"
	"idvault/app/exitserver"
)

// openExitDB opens the restored dump for the exit server.
func openExitDB(_ context.Context, _ config.Exit) (exitserver.DB, func(), error) {
	return nil, nil, errors.New("exit: this build has no database layer yet (exit/exitdb)")
}
