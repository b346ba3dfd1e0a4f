package records

import (
	"bytes"
	"io"
	"strings"
)

// StopWriter is the output of Decrypt when a program reads it as it comes (standard
// output into `psql \copy ... FROM STDIN`): it passes writes through, noting where the output
// stands, and Stop ends an output cut short with a line that every loader refuses.
//
// The rule of a stop (the server gone, the retry budget spent, SIGINT, SIGTERM, a write
// error): Decrypt writes only whole records, so the output ends on a record boundary;
// then comes one line, the stop line, that holds no clear byte and that a loader fails on,
// so that nothing is loaded and the loader's error names that line, not a record:
//
//	"idvault exit decrypt-records: STOPPED (interrupted) \0 ...
//
// It opens a CSV quoted field that never closes (PostgreSQL's COPY ... CSV fails with
// "unterminated CSV quoted field", encoding/csv and Python's strict csv too, whatever the
// column count), it is not JSON (a JSON-lines loader fails), and its \0 is a NUL byte to
// COPY's text format (refused as invalid UTF-8). PostgreSQL prints that line in its error's
// CONTEXT, and in its server log: only this line, never a record before it, since every record
// before it is whole.
type StopWriter struct {
	w      io.Writer
	csv    bool
	n      int64 // bytes written
	last   byte  // the last byte written
	quoted bool  // CSV: the bytes written leave a quoted field open (an odd count of quotes)
}

// NewStopWriter returns a StopWriter over w for records of format (FormatCSV or FormatJSONL).
func NewStopWriter(w io.Writer, format string) *StopWriter {
	return &StopWriter{w: w, csv: format == FormatCSV}
}

// Write writes p to the underlying writer.
func (s *StopWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if n > 0 {
		s.n += int64(n)
		s.last = p[n-1]
		if s.csv && bytes.Count(p[:n], []byte{'"'})%2 == 1 {
			s.quoted = !s.quoted
		}
	}
	return n, err
}

// StopLine is the stop line for reason (a few words naming the stop, no clear byte: quotes
// and line ends are dropped from it), line end included.
func StopLine(reason string) []byte {
	reason = strings.Map(func(r rune) rune {
		if r == '"' || r == '\r' || r == '\n' || r == '\\' {
			return ' '
		}
		return r
	}, reason)
	return []byte(`"idvault exit decrypt-records: STOPPED (` + reason + `) \0 before the end of the records: ` +
		`this line's open quote and \0 make a loader fail, so that none of the records above is loaded` + "\n")
}

// Stop writes the stop line for reason. After a record that has no line end (the input's last)
// it starts a line of its own; inside a CSV quoted field left open (an unreadable last record
// passed through as it came), it goes on in that field without its quote, which would close it;
// in CSV with nothing written before it, a line without quotes comes first, in the header's
// place.
func (s *StopWriter) Stop(reason string) error {
	line := StopLine(reason)
	switch {
	case s.csv && s.n == 0:
		// Nothing written, not even a CSV header (the server was found down before the input
		// was read): a loader told there is a header line would skip the stop line as one.
		line = append([]byte("idvault exit decrypt-records: STOPPED before any record (this line stands for the header)\n"), line...)
	case s.quoted:
		line = line[1:]
	case s.n > 0 && s.last != '\n':
		line = append([]byte{'\n'}, line...)
	}
	_, err := s.w.Write(line)
	return err
}
