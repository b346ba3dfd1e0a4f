package gen_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump/dumptest"
)

func TestMain(m *testing.M) { dumptest.Main(m) }

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}
