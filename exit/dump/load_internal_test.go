package dump

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A dump file name with control characters is printed escaped, never raw.
func TestLoadErrorQuotesUnprintableNames(t *testing.T) {
	e := &LoadError{File: "1_\x1b[2J.sql", Line: 3, Err: os.ErrInvalid}
	require.Equal(t, `"1_\x1b[2J.sql" line 3: invalid argument`, e.Error())
	e = &LoadError{File: "2_data.sql", Err: os.ErrInvalid}
	require.Equal(t, "2_data.sql: invalid argument", e.Error())
}
