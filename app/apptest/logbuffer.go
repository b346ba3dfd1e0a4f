package apptest

import (
	"bytes"
	"sync"
)

// LogBuffer collects the log lines of a server under test: concurrent handlers, or a child
// process's output, write to it, and a test reads what was logged so far (to check that no
// secret ever reaches the log, or to say why the process failed).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
