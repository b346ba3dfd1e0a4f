package store

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// testIdentities are Tanker's identity test vectors, by name (testdata/identities.txt).
func testIdentities(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/identities.txt")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if name, id, ok := strings.Cut(sc.Text(), " "); ok && !strings.HasPrefix(name, "#") {
			out[name] = id
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, out, 9)
	return out
}

// Every identity packs and unpacks to itself, byte for byte; Tanker's identities pack to less
// than half their text.
func TestPackIdentityGivesTheIdentityBack(t *testing.T) {
	t.Parallel()
	for name, id := range testIdentities(t) {
		p := packIdentity(nil, id)
		require.Equal(t, byte(packJSON), p[0], name)
		back, err := unpackIdentity(nil, p)
		require.NoError(t, err, name)
		require.Equal(t, id, string(back), name)
		require.Less(t, len(p), len(id)/2+16, name)
	}
	ids := testIdentities(t)
	perm := ids["permanent"]
	for name, size := range map[string][2]int{"permanent": {688, 281}, "publicpermanent": {180, 77}, "provisionalemail": {592, 241}} {
		require.Len(t, ids[name], size[0], name)
		require.Len(t, packIdentity(nil, ids[name]), size[1], name+" packed (records_pack.go's figures)")
	}

	// What is not an identity of that shape is kept as it is.
	for _, s := range []string{
		"perm-a@x.io", "", "e30=", // {}
		base64.StdEncoding.EncodeToString([]byte(`{"a":"b" }`)),                                                                        // a space
		base64.StdEncoding.EncodeToString([]byte(`{"a":"b\"c"}`)),                                                                      // an escape
		base64.StdEncoding.EncodeToString([]byte(`{"trustchain_id":null,"target":"x"}`)),                                               // not a string
		base64.StdEncoding.EncodeToString([]byte(`{"a":"QQ=="`)),                                                                       // unclosed
		base64.StdEncoding.EncodeToString([]byte(`{"a":"QR=="}`)),                                                                      // non-canonical base64 value
		base64.StdEncoding.EncodeToString([]byte(`{"a":"A"}`))[:8] + "\n" + base64.StdEncoding.EncodeToString([]byte(`{"a":"A"}`))[8:], // a newline in the base64
		strings.TrimRight(perm, "="),                                                                                                   // unpadded
	} {
		back, err := unpackIdentity(nil, packIdentity(nil, s))
		require.NoError(t, err, s)
		require.Equal(t, s, string(back))
	}

	// Other flat objects of strings are packed, and given back as they were: members in their
	// order, duplicates kept, keys not of Tanker's, lengths of several bytes, a value that has
	// the length of base64 but holds a newline (which the decoder would skip).
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0, 'x'}, 30_000))
	for _, doc := range []string{
		`{"":""}`,
		`{"value":"QUFB","zz":"","value":"x","value":"QUFC"}`,
		`{"` + strings.Repeat("k", 20_000) + `":"` + long + `","a":"` + strings.Repeat("!", 20_000) + `"}`,
		"{\"a\":\"AAA\nAAAA\",\"b\":\"AAAA\r\nAAAA\"}",
	} {
		s := base64.StdEncoding.EncodeToString([]byte(doc))
		p := packIdentity(nil, s)
		require.Equal(t, byte(packJSON), p[0], doc[:min(len(doc), 40)])
		back, err := unpackIdentity(nil, p)
		require.NoError(t, err)
		require.Equal(t, s, string(back))
	}
}

// Packing appends after what dst holds and leaves it alone.
func TestPackIdentityAppends(t *testing.T) {
	t.Parallel()
	id := testIdentities(t)["provisionalemail"]
	p := packIdentity([]byte("head"), id)
	require.Equal(t, "head", string(p[:4]))
	back, err := unpackIdentity([]byte("x"), p[4:])
	require.NoError(t, err)
	require.Equal(t, "x"+id, string(back))
}

func TestUnpackIdentityRejectsDamage(t *testing.T) {
	t.Parallel()
	good := packIdentity(nil, testIdentities(t)["permanent"])
	for name, p := range map[string][]byte{
		"empty":          nil,
		"unknown coding": {7},
		"unknown key":    {packJSON, byte(len(packKeys) + 1), packText, 0},
		"unknown kind":   {packJSON, 1, 9, 0},
		"truncated":      good[:len(good)-1],
		"no value":       {packJSON, 1},
		"long length":    {packJSON, 0, 200},
	} {
		_, err := unpackIdentity(nil, p)
		require.ErrorIs(t, err, errPacked, name)
	}
}

func FuzzPackIdentity(f *testing.F) {
	for _, id := range testIdentities(f) {
		f.Add(id)
	}
	f.Add("e30=")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"a":"QR=="}`)))
	f.Fuzz(func(t *testing.T, s string) {
		dst := make([]byte, 0, len(s)+1)
		p := packIdentity(dst, s)
		back, err := unpackIdentity(nil, p)
		require.NoError(t, err)
		require.Equal(t, s, string(back))
		// Packed in the room packIdentity makes first: no array holding a secret was outgrown.
		require.Same(t, unsafe.SliceData(dst[:1]), unsafe.SliceData(p), "dst regrown")
	})
}

func FuzzUnpackIdentity(f *testing.F) {
	for _, id := range testIdentities(f) {
		f.Add(packIdentity(nil, id))
	}
	f.Add([]byte{packJSON, 0, 3, 'a', 'b', 'c', packB64, 1, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		_, _ = unpackIdentity(nil, p) // never panics
	})
}

// Records are written in layout 3 with packed identities, and records of layout 2 (identities
// sealed as they are) are still read, by every read path.
func TestRecordLayoutsTwoAndThree(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := bytes.Repeat([]byte{5}, 32)
	ids := testIdentities(t)
	_, err := s.UpdateRecord(app, "new@x.io", func(r *Record, _ bool) (bool, error) {
		r.UserID, r.PermanentIdentity, r.PublicPermanent = "u1", ids["permanent"], ids["publicpermanent"]
		return true, nil
	})
	require.NoError(t, err)

	// A record as a store before layout 3 wrote it.
	oldKey := recordKey(app, "old@x.io")
	seal := func(v, field string) []byte {
		b, err := s.seal.sealString(v, adFor(bucketRecords, oldKey, field))
		require.NoError(t, err)
		return b
	}
	old := recordDisk{
		userID: []byte("u2"), provisional: seal(ids["provisionalemail"], "provisional"),
		publicProvisional: seal(ids["publicprovisionalemail"], "public provisional"),
		createdAt:         time.Unix(1, 0), updatedAt: time.Unix(2, 0),
	}.encode()
	require.Equal(t, byte(recordUnpacked), old[0])
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRecords).Put(oldKey, old) }))

	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(recordKey(app, "new@x.io"))
		require.Equal(t, byte(recordFormat), v[0])
		d, err := decodeRecord(v)
		require.NoError(t, err)
		require.True(t, d.packed)
		require.Len(t, d.permanent, sealedSize(281), "sealed packed")
		return nil
	}))
	for _, c := range []struct{ email, perm, prov, pubPerm, pubProv string }{
		{"new@x.io", ids["permanent"], "", ids["publicpermanent"], ""},
		{"old@x.io", "", ids["provisionalemail"], "", ids["publicprovisionalemail"]},
	} {
		s.cache.forget(app, c.email)
		r, err := s.Record(app, c.email)
		require.NoError(t, err, c.email)
		require.Equal(t, c.perm, r.PermanentIdentity, c.email)
		require.Equal(t, c.prov, r.ProvisionalIdentity, c.email)
		require.Equal(t, c.pubPerm, r.PublicPermanent, c.email)
		require.Equal(t, c.pubProv, r.PublicProvisional, c.email)
		s.cache.forget(app, c.email)
		pubs, err := s.Publics(app, []string{c.email})
		require.NoError(t, err)
		require.Equal(t, c.pubPerm, pubs[0].PublicPermanent, c.email)
		require.Equal(t, c.pubProv, pubs[0].PublicProvisional, c.email)
	}
}

// sealString seals v as layouts 1 and 2 sealed a record's identity (unpacked; empty stays
// empty): tests write records of those layouts with it.
func (s *sealer) sealString(v string, ad []byte) ([]byte, error) {
	if v == "" {
		return nil, nil
	}
	return s.seal([]byte(v), ad)
}
