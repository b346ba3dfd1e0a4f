package exitclient_test

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
)

// DecryptBatch's body, framed as it is sent, is EncodeBatch's bytes whatever the reads' sizes:
// empty items, lengths of one and two varint bytes, none at all.
func TestBatchBodyIsEncodeBatch(t *testing.T) {
	cases := [][][]byte{
		nil,
		{{}},
		{[]byte("a"), {}, bytes.Repeat([]byte("x"), 127), bytes.Repeat([]byte("y"), 128), bytes.Repeat([]byte("z"), 70000)},
	}
	for _, items := range cases {
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
		} {
			got, err := exitclient.BatchBody(items, wrap)
			require.NoError(t, err)
			require.Equal(t, exitclient.EncodeBatch(items), got)
		}
	}
}
