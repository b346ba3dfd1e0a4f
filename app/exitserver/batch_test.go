package exitserver_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// One batch decrypts every format, answers each item in order with its clear bytes or with
// the code POST /v1/decrypt would give it alone.
func TestDecryptBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	who, _ := f.db.AddUser()
	stranger, _ := f.db.AddUser()
	status, raw, _ := f.do(t, "PUT", "/v1/identities", testToken, importBody(who))
	require.Equal(t, 201, status, "%s", raw)

	var items [][]byte
	var want []exitclient.BatchResult
	for i, v := range []encryption.Version{encryption.V2, encryption.V3, encryption.V4, encryption.V5, encryption.V6,
		encryption.V7, encryption.V8, encryption.V9, encryption.V10, encryption.V11} {
		clear := randomBytes(10 + 37*i)
		ct, err := f.db.Encrypt(who, v, clear, encryption.EncryptOptions{})
		require.NoError(t, err)
		items = append(items, ct)
		want = append(want, exitclient.BatchResult{Clear: clear})
	}
	notMine, err := f.db.Encrypt(stranger, encryption.V10, []byte("no"), encryption.EncryptOptions{})
	require.NoError(t, err)
	tampered := bytes.Clone(items[8])
	tampered[len(tampered)-1] ^= 1
	items = append(items, notMine, tampered, []byte{99, 1}, []byte{}, items[7][:20])
	status, raw, _ = f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(exitclient.EncodeBatch(items)))
	require.Equal(t, 200, status, "%s", raw)
	got, err := exitclient.ParseBatchAnswer(raw, len(items))
	require.NoError(t, err)
	for i, w := range want {
		require.Equal(t, w.Clear, got[i].Clear, "item %d", i)
		require.Empty(t, got[i].Code)
	}
	var codes []string
	for _, r := range got[len(want):] {
		require.NotEmpty(t, r.Message)
		codes = append(codes, r.Code)
	}
	require.Equal(t, []string{"key_not_found", "decryption_failed", "unsupported_format", "unsupported_format", "truncated_data"}, codes)
	require.Contains(t, got[len(want)].Message, "import the identity of user", "the creator is named as on /v1/decrypt")

	// An empty batch is an empty answer.
	status, raw, _ = f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(nil))
	require.Equal(t, 200, status)
	require.Empty(t, raw)
}

// Framing errors and the limits are answered for the whole batch; so is a database that does
// not answer (503, so that the client retries it whole), and a missing token.
func TestDecryptBatchRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	who, _ := f.db.AddUser()
	ct, err := f.db.Encrypt(who, encryption.V10, []byte("x"), encryption.EncryptOptions{})
	require.NoError(t, err)

	for name, body := range map[string][]byte{
		"length past the end": append(binary.AppendUvarint(nil, 500), ct...),
		"bad varint":          bytes.Repeat([]byte{0xff}, 11),
	} {
		status, raw, _ := f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(body))
		requireError(t, status, raw, 400, "invalid_body")
		_ = name
	}
	tooMany := bytes.Repeat([]byte{0}, exitserver.DecryptBatchItems+1) // empty items
	status, raw, _ := f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(tooMany))
	requireError(t, status, raw, 413, "payload_too_large")
	status, raw, _ = f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(exitclient.EncodeBatch([][]byte{make([]byte, exitserver.DecryptBatchBytes)})))
	requireError(t, status, raw, 413, "payload_too_large")

	f.db.SetDown(true)
	status, raw, hdr := f.do(t, "POST", "/v1/decrypt-batch", testToken, bytes.NewReader(exitclient.EncodeBatch([][]byte{ct})))
	requireError(t, status, raw, 503, "database_unavailable")
	require.NotEmpty(t, hdr.Get("Retry-After"))
	f.db.SetDown(false)

	status, raw, _ = f.do(t, "POST", "/v1/decrypt-batch", "", bytes.NewReader(exitclient.EncodeBatch([][]byte{ct})))
	requireError(t, status, raw, 401, "unauthorized")
}

// A batch holds its body and its answer in the memory budget until the answer is written: one
// that can never fit is payload_too_large, and the reservation comes back after each answer.
func TestDecryptBatchKeepsToTheMemoryBudget(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	who := db.AddImportedUser()
	srv := exitserver.New(db, exitserver.Config{MemoryBudget: 1 << 20})
	url, client := apptest.ServeServer(t, srv)
	client.Transport = apptest.CheckTransport(client.Transport, apptest.LoadExitAPIDoc)
	post := func(body []byte) (int, []byte) {
		resp, err := client.Post(url+"/v1/decrypt-batch", "application/octet-stream", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, raw
	}
	var items [][]byte
	for range 100 {
		ct, err := db.Encrypt(who, encryption.V10, randomBytes(200), encryption.EncryptOptions{})
		require.NoError(t, err)
		items = append(items, ct)
	}
	status, raw := post(exitclient.EncodeBatch(items))
	require.Equal(t, 200, status, "%s", raw)
	require.Positive(t, srv.Memory().Peak)
	require.Eventually(t, func() bool { return srv.Memory().Reserved == 0 }, 10*time.Second, 10*time.Millisecond)

	status, raw = post(exitclient.EncodeBatch([][]byte{make([]byte, 600<<10)}))
	requireError(t, status, raw, 413, "payload_too_large")
	require.LessOrEqual(t, srv.Memory().Peak, int64(1<<20))
}
