package table_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/pgtest"
	"github.com/idvault/idvault/exit/table"
)

// A text field that does not decode is NULL in the destination and keyed in the errors table
// as invalid_encoding, and the values read after it in its batch still arrive whole; a text
// that decodes to no byte is sent as an empty ciphertext (here refused as one that does not
// decrypt), not taken for an empty value; an empty text stays empty.
func TestDecryptTableTextThatDoesNotDecode(t *testing.T) {
	t.Parallel()
	from, to := pgtest.NewDB(t), pgtest.NewDB(t)
	exec(t, from, `CREATE TABLE msgs (id bigint PRIMARY KEY, body text, note text)`,
		`INSERT INTO msgs VALUES (1, encode('ct:one', 'base64'), 'n1'), (2, 'not base64!', 'n2'),
			(3, '==', 'n3'), (4, encode('ct:four', 'base64'), 'n4'), (5, '', 'n5'), (6, '*', 'n6'), (7, encode('ct:seven', 'base64'), 'n7')`)
	opts := table.Options{From: from, To: to, Table: "msgs", Key: "id", Fields: []string{"body"}, ToTable: "clear_msgs",
		Decrypter: &fakeDecrypter{}, BatchRows: 10,
		Decode: func(dst, text []byte) ([]byte, error) {
			if bytes.Equal(text, []byte("==")) {
				return dst, nil // padding alone: no byte
			}
			return decodeBase64(dst, text)
		}}
	rep, err := table.Run(context.Background(), opts)
	require.NoError(t, err)
	require.EqualValues(t, 7, rep.Rows)
	require.EqualValues(t, 3, rep.Failed)
	require.EqualValues(t, 3, rep.Decrypted)
	require.EqualValues(t, 1, rep.Empty)
	require.Equal(t, "1 one n1\n2 NULL n2\n3 NULL n3\n4 four n4\n5 EMPTY n5\n6 NULL n6\n7 seven n7",
		query(t, to, `SELECT id, CASE WHEN body IS NULL THEN 'NULL' WHEN body = '' THEN 'EMPTY' ELSE substr(convert_from(body, 'UTF8'), 1) END, note FROM clear_msgs ORDER BY id`))
	require.Equal(t, "2 invalid_encoding\n3 decryption_failed\n6 invalid_encoding",
		query(t, to, `SELECT key, code FROM clear_msgs_errors ORDER BY key`))
}
