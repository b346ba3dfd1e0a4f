package exitclient_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitclient/records"
)

// --key: each failure carries the value of the key column (CSV) or key (JSON: a string's text,
// a number as written), beside the record number.
func TestDecryptRecordsKey(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	bad := "!!notbase64!!"
	_, errs, _ := f.run(t, "id,v\n\"k,1\","+bad+"\n,"+bad+"\n7,"+f.b64(t, "ok")+"\n8,9,10\n", records.Options{Format: records.FormatCSV, Fields: []string{"v"}, Key: "id"})
	require.Len(t, errs, 3)
	// An unreadable record (3 fields, the header 2) still names its key when it has the column.
	require.Equal(t, []string{"k,1", "", "8"}, []string{errs[0].Key, errs[1].Key, errs[2].Key})
	require.Equal(t, []int{1, 2, 4}, []int{errs[0].Record, errs[1].Record, errs[2].Record})
	line, err := json.Marshal(errs[0])
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(line), `{"record":1,"key":"k,1","field":"v"`), "%s", line)

	_, errs, _ = f.run(t, `{"id":17,"v":"`+bad+`"}`+"\n"+`{"v":"`+bad+`","id":"a\"b"}`+"\n"+`{"v":"`+bad+`"}`+"\n",
		records.Options{Format: records.FormatJSONL, Fields: []string{"v"}, Key: "id"})
	require.Len(t, errs, 3)
	require.Equal(t, []string{"17", `a"b`, ""}, []string{errs[0].Key, errs[1].Key, errs[2].Key})

	_, err = records.Decrypt(context.Background(), f.c, strings.NewReader("id,v\n1,2\n"), io.Discard,
		records.Options{Format: records.FormatCSV, Fields: []string{"v"}, Key: "nope"})
	var usage *records.UsageError
	require.ErrorAs(t, err, &usage)
	require.Contains(t, err.Error(), `no column "nope"`)
}

// The audit's --key: each item it reports carries its record's key beside its source.
func TestAuditRecordsKey(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	path := filepath.Join(t.TempDir(), "r.jsonl")
	write(t, path, []byte(`{"id":"a-1","v":"`+f.b64(t, "mine")+`"}`+"\n"+`{"id":"b-2","v":"!!"}`+"\n"+`{"v":"AAAA"}`+"\n"))
	_, items := auditRecords(t, f.c, path, audit.Options{Format: "jsonl", Fields: []string{"v"}, Key: "id"})
	require.Len(t, items, 2)
	require.Equal(t, [][2]string{{"2:v", "b-2"}, {"3:v", ""}}, [][2]string{{items[0].Source, items[0].Key}, {items[1].Source, items[1].Key}})
	line, err := json.Marshal(items[0])
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(line), `{"source":"2:v","key":"b-2",`), "%s", line)
}
