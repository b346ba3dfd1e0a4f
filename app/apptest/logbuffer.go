package apptest

import "github.com/idvault/idvault/app/apptest/external"

// LogBuffer collects the log lines of a server under test: concurrent handlers, or a child
// process's output, write to it, and a test reads what was logged so far (to check that no
// secret ever reaches the log, or to say why the process failed). It is external.Output,
// without a limit.
type LogBuffer = external.Output
