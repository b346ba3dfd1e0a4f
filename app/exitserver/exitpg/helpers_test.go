package exitpg_test

import "github.com/idvault/idvault/app/apptest/exitpgtest"

// The helpers are package exitpgtest's, which app/e2e shares.
const token = exitpgtest.Token

type (
	loaded   = exitpgtest.Loaded
	instance = exitpgtest.Instance
)

var (
	loadDump             = exitpgtest.LoadDump
	servedWithIdentities = exitpgtest.ServedWithIdentities
	serve                = exitpgtest.Serve
	identities           = exitpgtest.Identities
	benchDump            = exitpgtest.BenchDump
	loadBench            = exitpgtest.LoadBench
)
