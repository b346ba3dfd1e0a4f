package exitclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitserver"
)

// Bare identity lines (what createIdentity returns), mixed with JSON lines.
func TestReadIdentitiesBareLines(t *testing.T) {
	t.Parallel()
	bare := "eyJ0cnVzdGNoYWluX2lkIjoiQUFBQSIsInRhcmdldCI6InVzZXIifQ=="
	in := bare + "\r\n\n{\"email\":\"a@x.io\",\"identity\":\"ID-A\"}\n  " + bare[:20] + "-_  \n\"ID-B\""
	got, err := exitclient.ReadIdentities(strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{bare, 1}, {"ID-A", 3}, {bare[:20] + "-_", 4}, {"ID-B", 5}}, got)
}

// Line numbers count the blank lines before the first entry, and a UTF-8 byte order mark at the
// start (Notepad's, Excel's "CSV UTF-8") is not part of the first entry, in either layout.
func TestReadIdentitiesLeadingBlankLinesAndBOM(t *testing.T) {
	t.Parallel()
	got, err := exitclient.ReadIdentities(strings.NewReader("\n\n\"ID-A\"\n"))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 3}}, got)
	_, err = exitclient.ReadIdentities(strings.NewReader(" \r\n\n\"ID-A\"\nbad line\n"))
	require.ErrorContains(t, err, "line 4: not a JSON string")

	bom := "\ufeff"
	got, err = exitclient.ReadIdentities(strings.NewReader(bom + "{\"identity\": \"ID-A\"}\r\nID-B\r\n"))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 1}, {"ID-B", 2}}, got)
	got, err = exitclient.ReadIdentities(strings.NewReader(bom + "[\"ID-A\", \"ID-B\"]"))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 1}, {"ID-B", 2}}, got)
	_, err = exitclient.ReadIdentities(strings.NewReader("ID-A\n" + bom + "ID-B\n"))
	require.ErrorContains(t, err, "line 2:", "a mark anywhere else is a bad character")
}

// Every bad line and every line over the limit is named by its number, without quoting it and
// without bufio's "token too long".
func TestReadIdentitiesNamesBadLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A", exitclient.MaxLineBytes+1)
	in := "GOODLINE\nsecret,with,commas\n" + long + "\nGOODLINE\n{\"email\": \"secret@x.io\"}\n" + strings.Repeat("B", exitclient.MaxLineBytes) + "\n"
	_, err := exitclient.ReadIdentities(strings.NewReader(in))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "line 2: not a JSON string or object, nor a bare base64 identity")
	require.Contains(t, msg, "line 3: longer than 65536 bytes")
	require.Contains(t, msg, "line 5: no \"identity\" field")
	require.NotContains(t, msg, "line 6", "a line of exactly the limit is taken")
	require.NotContains(t, msg, "token too long")
	require.NotContains(t, msg, "secret")
	require.Less(t, len(msg), 1000)

	// A last line over the limit without a newline, and many bad lines: the first ten and a count.
	_, err = exitclient.ReadIdentities(strings.NewReader("GOOD\n" + long))
	require.ErrorContains(t, err, "line 2: longer than")
	_, err = exitclient.ReadIdentities(strings.NewReader(strings.Repeat("a,b\n", 25)))
	require.ErrorContains(t, err, "line 10:")
	require.NotContains(t, err.Error(), "line 11:")
	require.ErrorContains(t, err, "and 15 more bad lines")
}

// A batch the server refuses as too large is halved down to single identities; a single
// identity still too large is refused by its line, and the rest is imported.
func TestImportSplitsBatchesTooLarge(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{BatchLimit: 4})
	var ids []exitclient.Identity
	for i := range 11 {
		id, _ := db.AddUser()
		if i == 6 {
			id = strings.Repeat("A", 32<<10) // over the body limit (4 × 4 KiB + 4 KiB) even alone
		}
		ids = append(ids, exitclient.Identity{Value: id, Line: i + 1})
	}
	var last int
	sum, err := c.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 11, Progress: func(done, total int) {
		require.Equal(t, 11, total)
		require.Greater(t, done, last)
		last = done
	}})
	require.NoError(t, err)
	require.Equal(t, 10, sum.Imported)
	require.Equal(t, 11, last)
	require.Len(t, sum.Refused, 1)
	require.Equal(t, 7, sum.Refused[0].Line)
	require.Contains(t, sum.Refused[0].Reason, "too large")
	for i, id := range ids {
		if i != 6 {
			require.True(t, db.IsImported(id.Value))
		}
	}
}
