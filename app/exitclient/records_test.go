package exitclient_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// recordsFixture is a server with one imported user (who) and one who is not (stranger).
type recordsFixture struct {
	db            *exitfake.DB
	c             *exitclient.Client
	who, stranger string
}

func newRecordsFixture(t *testing.T) *recordsFixture {
	t.Helper()
	db, c := server(t, exitserver.Config{})
	f := &recordsFixture{db: db, c: c}
	f.who, _ = db.AddUser()
	f.stranger, _ = db.AddUser()
	_, err := c.Import(context.Background(), []exitclient.Identity{{Value: f.who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	return f
}

// enc encrypts clear for identity in format v and returns the raw ciphertext.
func (f *recordsFixture) enc(t *testing.T, identity string, v encryption.Version, clear string) []byte {
	t.Helper()
	ct, err := f.db.Encrypt(identity, v, []byte(clear), encryption.EncryptOptions{})
	require.NoError(t, err)
	return ct
}

func (f *recordsFixture) b64(t *testing.T, clear string) string {
	return base64.StdEncoding.EncodeToString(f.enc(t, f.who, encryption.V10, clear))
}

func (f *recordsFixture) run(t *testing.T, in string, opts records.Options) (string, []records.FieldError, records.Report) {
	t.Helper()
	var out bytes.Buffer
	var errs []records.FieldError
	opts.Errors = func(fe records.FieldError) error { errs = append(errs, fe); return nil }
	rep, err := records.Decrypt(context.Background(), f.c, strings.NewReader(in), &out, opts)
	require.NoError(t, err)
	return out.String(), errs, rep
}

// CSV: quoted fields with commas, quotes and line ends come out as they went in; the named
// column is replaced; failures keep their ciphertext and are reported by record and field.
func TestDecryptRecordsCSV(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	notMine := base64.StdEncoding.EncodeToString(f.enc(t, f.stranger, encryption.V9, "hidden"))
	tampered := f.enc(t, f.who, encryption.V10, "tampered")
	tampered[len(tampered)-1] ^= 1
	tamperedText := base64.StdEncoding.EncodeToString(tampered)
	binary := base64.StdEncoding.EncodeToString(f.enc(t, f.who, encryption.V3, "\xff\xfe"))

	// Records 3 to 9 come out as they went in: empty fields, a blank line, and failures,
	// which keep their ciphertext.
	unchanged := "3,empty,,y\r\n" +
		"4,quoted empty,\"\",z\r\n" +
		"\r\n" +
		"5,not mine," + notMine + ",w\r\n" +
		"6,tampered," + tamperedText + ",v\r\n" +
		"7,garbage,!!notbase64!!,u\r\n" +
		"8,binary," + binary + ",t\r\n" +
		"9,too,many,fields,here\r\n"
	in := "id,note,secret,tail\r\n" +
		"1,\"multi\nline, \"\"quoted\"\"\"," + f.b64(t, "alice@example.com") + ",x\r\n" +
		"2,plain,\"" + f.b64(t, "has, comma \"and\" quote\nand newline") + "\",\"\"\r\n" +
		unchanged +
		"10,empty clear," + f.b64(t, "") + ",s"
	out, errs, rep := f.run(t, in, records.Options{Format: records.FormatCSV, Fields: []string{"secret"}, Jobs: 2})

	want := "id,note,secret,tail\r\n" +
		"1,\"multi\nline, \"\"quoted\"\"\",alice@example.com,x\r\n" +
		"2,plain,\"has, comma \"\"and\"\" quote\nand newline\",\"\"\r\n" +
		unchanged +
		"10,empty clear,\"\",s"
	require.Equal(t, want, out)
	codes := map[int]string{}
	for _, e := range errs {
		codes[e.Record] = e.Field + ":" + e.Code
		require.NotEmpty(t, e.Message)
	}
	require.Equal(t, map[int]string{5: "secret:key_not_found", 6: "secret:decryption_failed", 7: "secret:invalid_encoding",
		8: "secret:not_text", 9: ":invalid_record"}, codes)
	require.Equal(t, records.Report{Records: 10, Decrypted: 3, Empty: 2, Failed: 5}, rep)
	for _, e := range errs {
		require.NotContains(t, e.Message, "!!notbase64!!", "errors never quote a value")
	}

	// A column that is not in the header is a usage error, before any output.
	var buf bytes.Buffer
	_, err := records.Decrypt(context.Background(), f.c, strings.NewReader(in), &buf, records.Options{Format: records.FormatCSV, Fields: []string{"nope"}})
	var ue *records.UsageError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), `"nope"`)
	require.Zero(t, buf.Len())
}

// JSON lines: only the named top-level key changes; null, absent keys and blank lines pass
// through; a line that is not an object is kept and reported.
func TestDecryptRecordsJSONLines(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	in := `{"id": 1, "secret": "` + f.b64(t, `<b>"tag"</b> & é`) + `", "nested": {"secret": "keep"}}` + "\n" +
		`{"id":2,"secret":null}` + "\n" +
		`{"id":3}` + "\n" +
		"\n" +
		`{"id":4,"secret":12}` + "\n" +
		`not json` + "\n" +
		`{"id":6,"secret":"` + f.b64(t, "ctrl\x01\ttab") + `","other":"` + f.b64(t, "second") + `"}`
	out, errs, rep := f.run(t, in, records.Options{Format: records.FormatJSONL, Fields: []string{"secret", "other"}})
	want := `{"id": 1, "secret": "<b>\"tag\"</b> & é", "nested": {"secret": "keep"}}` + "\n" +
		`{"id":2,"secret":null}` + "\n" +
		`{"id":3}` + "\n" +
		"\n" +
		`{"id":4,"secret":12}` + "\n" +
		`not json` + "\n" +
		`{"id":6,"secret":"ctrl\u0001\ttab","other":"second"}`
	require.Equal(t, want, out)
	require.Equal(t, []records.FieldError{
		{Record: 4, Field: "secret", Code: "invalid_field", Message: "the value is not a JSON string"},
		{Record: 5, Field: "", Code: "invalid_record", Message: "the line is not valid JSON"},
	}, errs)
	require.Equal(t, int64(6), rep.Records)
	require.Equal(t, int64(3), rep.Decrypted)

	// A UTF-8 BOM before the first line (a Windows editor's UTF-8) passes through, and the
	// line decrypts as CSV's header does with one; a BOM on a later line is no BOM.
	bom := "\xef\xbb\xbf"
	in = bom + `{"secret":"` + f.b64(t, "first") + `"}` + "\r\n" + bom + `{"secret":"x"}` + "\r\n"
	out, errs, rep = f.run(t, in, records.Options{Format: records.FormatJSONL, Fields: []string{"secret"}})
	require.Equal(t, bom+`{"secret":"first"}`+"\r\n"+bom+`{"secret":"x"}`+"\r\n", out)
	require.Equal(t, []records.FieldError{{Record: 2, Field: "", Code: "invalid_record", Message: "the line is not valid JSON"}}, errs)
	require.Equal(t, int64(1), rep.Decrypted)
}

// Ciphertexts as URL-safe or unpadded base64, and as hex (bytea's \x form too); clear values
// as base64 or hex.
func TestDecryptRecordsEncodings(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	ct := f.enc(t, f.who, encryption.V9, "\x00\xffbinary")
	forms := []string{base64.StdEncoding.EncodeToString(ct), base64.RawStdEncoding.EncodeToString(ct),
		base64.URLEncoding.EncodeToString(ct), base64.RawURLEncoding.EncodeToString(ct)}
	in := "v\n" + strings.Join(forms, "\n") + "\n"
	out, errs, _ := f.run(t, in, records.Options{Format: records.FormatCSV, Fields: []string{"v"}, ClearEncoding: "hex"})
	require.Empty(t, errs)
	h := hex.EncodeToString([]byte("\x00\xffbinary"))
	require.Equal(t, "v\n"+strings.Repeat(h+"\n", 4), out)

	in = "v\n" + hex.EncodeToString(ct) + "\n\\x" + strings.ToUpper(hex.EncodeToString(ct)) + "\n"
	out, errs, _ = f.run(t, in, records.Options{Format: records.FormatCSV, Fields: []string{"v"}, Encoding: "hex", ClearEncoding: "base64"})
	require.Empty(t, errs)
	b := base64.StdEncoding.EncodeToString([]byte("\x00\xffbinary"))
	require.Equal(t, "v\n"+b+"\n"+b+"\n", out)
}

// Thousands of records go in several batches, several at once, and come out in order; a
// value too big for a batch goes alone to POST /v1/decrypt.
func TestDecryptRecordsKeepsOrderAcrossBatches(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	var in, want strings.Builder
	in.WriteString("n,v\n")
	want.WriteString("n,v\n")
	key := make([]byte, 32)
	session := encryption.SimpleID{1, 2, 3}
	for i := range 4500 {
		clear := fmt.Sprintf("value number %d", i)
		ct, rid, err := encryption.Encrypt(encryption.V9, key, []byte(clear), encryption.EncryptOptions{SessionID: &session})
		require.NoError(t, err)
		if i == 0 {
			f.db.Publish(f.who, rid.ID, key) // one session for every record, as transparent sessions share them
		}
		fmt.Fprintf(&in, "%d,%s\n", i, base64.StdEncoding.EncodeToString(ct))
		fmt.Fprintf(&want, "%d,%s\n", i, clear)
	}
	big := strings.Repeat("b", 1<<20)
	ct := f.enc(t, f.who, encryption.V8, big)
	fmt.Fprintf(&in, "big,%s\n", base64.StdEncoding.EncodeToString(ct))
	fmt.Fprintf(&want, "big,%s\n", big)
	var progress []int64
	out, errs, rep := f.run(t, in.String(), records.Options{Format: records.FormatCSV, Fields: []string{"v"}, Jobs: 3,
		Progress: func(n int64) { progress = append(progress, n) }})
	require.Empty(t, errs)
	require.Equal(t, want.String(), out)
	require.Equal(t, int64(4501), rep.Records)
	require.Greater(t, len(progress), 2, "several batches")
	require.IsIncreasing(t, progress)
}

// A batch the server refuses as a whole (wrong token) stops the run with its code instead of
// reporting every field.
func TestDecryptRecordsStopsOnABatchError(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	f.c.Token = "wrong-token-wrong-token"
	var out bytes.Buffer
	_, err := records.Decrypt(context.Background(), f.c, strings.NewReader("v\n"+f.b64(t, "x")+"\n"), &out,
		records.Options{Format: records.FormatCSV, Fields: []string{"v"}})
	require.Equal(t, "client_config", exitclient.Code(err))
	require.Contains(t, err.Error(), "refused the token")
}

// repeatReader gives n bytes of b, then EOF, without holding them.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// A record over 64 MiB (a CSV quote left open, a runaway line) stops the run before anything is
// written, naming the record (CSV, numbered as --errors numbers them) or the line (JSON lines,
// blank ones counted) so that the operator can find it in a file of millions.
func TestDecryptRecordsNamesARecordTooLarge(t *testing.T) {
	c := echoClient(t) // no request is sent
	for _, tc := range []struct {
		name, format, before, want string
	}{
		{"csv", records.FormatCSV, "id,v\n1,x\n\n2,\"open", "read records: record 2: over 64 MiB (a quote left open?)"},
		{"jsonl", records.FormatJSONL, "{\"v\":null}\n\n{\"v\":\"", "read records: line 3 is over 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := io.MultiReader(strings.NewReader(tc.before), &repeatReader{b: 'A', n: 65 << 20})
			var out bytes.Buffer
			_, err := records.Decrypt(context.Background(), c, in, &out, records.Options{Format: tc.format, Fields: []string{"v"}, Jobs: 1})
			require.EqualError(t, err, tc.want)
		})
	}
}
