package loadgen_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The performance page holds the table that BenchmarkHTTPLoad writes between these two lines;
// the rest of the page is prose written by hand, which writeTable never touches.
const (
	tableBegin = "<!-- bench-table: written by make bench, never by hand -->"
	tableEnd   = "<!-- /bench-table -->"
)

// errNoTable is writeTable's answer for a page without exactly one pair of markers.
var errNoTable = errors.New("the page has no bench-table markers, or more than one pair")

// writeTable replaces what lies between the markers of the page at path with table, and leaves
// every other byte of the page as it was. The new page is written beside the old one, synced
// and renamed over it, so that an interrupted run leaves the old page whole.
func writeTable(path, table string) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := replaceTable(page, table)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bench-table-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// replaceTable is page with the lines between its marker lines replaced by table.
func replaceTable(page []byte, table string) ([]byte, error) {
	begin := []byte(tableBegin + "\n")
	end := []byte(tableEnd + "\n")
	i := bytes.Index(page, begin)
	j := bytes.Index(page, end)
	if i < 0 || j < i || bytes.Count(page, []byte(tableBegin)) != 1 || bytes.Count(page, []byte(tableEnd)) != 1 ||
		(i > 0 && page[i-1] != '\n') || page[j-1] != '\n' {
		return nil, errNoTable
	}
	body := table
	if body != "" && body[len(body)-1] != '\n' {
		body += "\n"
	}
	var out bytes.Buffer
	out.Write(page[:i+len(begin)])
	out.WriteString(body)
	out.Write(page[j:])
	return out.Bytes(), nil
}
