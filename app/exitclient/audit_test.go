package exitclient_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/encryption"
)

// auditTree and auditRecords run the audit as idvault exit audit does for a directory and for
// a file of records, and collect the items it reports.
func auditTree(t *testing.T, c *exitclient.Client, dir string, opts audit.Options) (audit.Report, []audit.Item) {
	t.Helper()
	var items []audit.Item
	opts.Item = func(it audit.Item) error { items = append(items, it); return nil }
	rep, err := audit.Tree(context.Background(), c, dir, opts)
	require.NoError(t, err)
	return rep, items
}

func auditRecords(t *testing.T, c *exitclient.Client, path string, opts audit.Options) (audit.Report, []audit.Item) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var items []audit.Item
	opts.Item = func(it audit.Item) error { items = append(items, it); return nil }
	rep, err := audit.Records(context.Background(), c, f, opts)
	require.NoError(t, err)
	return rep, items
}

// An audit of a tree of files reads headers only: it tells reachable, missing (with the
// holders, by plain user ID when --users knows them) and invalid items apart; after importing
// the holders it names, everything it called missing is reachable, and decrypts.
func TestAuditTree(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{})
	alice, _ := db.AddNamedUser("alice@example.com")
	bob, bobID := db.AddNamedUser("bob@example.com")
	carol, carolID := db.AddUser() // not in --users
	_, err := c.Import(context.Background(), []exitclient.Identity{{Value: alice, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)

	in := t.TempDir()
	want := map[string][]byte{}
	put := func(rel string, data []byte) {
		write(t, filepath.Join(in, rel), data)
	}
	for i, v := range []encryption.Version{2, 3, 4, 5, 6, 7, 8, 9, 10, 11} {
		owner := []string{alice, bob, carol}[i%3]
		clear := random(10 + 3000*(i%2)) // small files, and files whose ID ends them past the header
		ct, err := db.Encrypt(owner, v, clear, encryption.EncryptOptions{ChunkSize: 4096})
		require.NoError(t, err)
		rel := fmt.Sprintf("d%d/f%02d.bin", i%2, i)
		put(rel, ct)
		want[rel] = clear
	}
	put("empty.bin", nil)
	put("unknown.bin", []byte{42, 1, 2, 3})
	put("short.bin", []byte{2, 1, 2, 3})
	require.NoError(t, os.Symlink(filepath.Join(in, "d0", "f00.bin"), filepath.Join(in, "link.bin"))) // exit decrypt does not follow it

	rep, items := auditTree(t, c, in, audit.Options{Users: []string{"alice@example.com", "bob@example.com", "nobody@example.com"}})
	require.Equal(t, audit.Summary{Total: 14, Reachable: 4, Missing: 6, Invalid: 4}, rep.Summary)
	b64 := base64.StdEncoding.EncodeToString
	require.ElementsMatch(t, []audit.UserCount{
		{UserID: b64(bobID), User: "bob@example.com", Resources: 3},
		{UserID: b64(carolID), Resources: 3},
	}, rep.MissingByUser)
	invalid := map[string]string{}
	missing := map[string]audit.Item{}
	for _, it := range items {
		if it.Status == audit.Invalid {
			invalid[it.Source] = it.Reason
			continue
		}
		require.Equal(t, audit.Missing, it.Status)
		require.Len(t, it.Holders, 1)
		require.NotEmpty(t, it.ResourceID)
		missing[it.Source] = it
	}
	require.Equal(t, map[string]string{"empty.bin": "empty", "unknown.bin": "unknown format 42", "short.bin": "too short for its format's header",
		"link.bin": "a symbolic link, not followed: put what it points to under the input directory instead"}, invalid)
	require.Len(t, missing, 6)
	for _, it := range missing {
		if it.Holders[0].UserID == b64(bobID) {
			require.Equal(t, "bob@example.com", it.Holders[0].User)
		} else {
			require.Empty(t, it.Holders[0].User, "a holder --users does not know is named by user ID only")
		}
		ct, err := os.ReadFile(filepath.Join(in, it.Source))
		require.NoError(t, err)
		_, rid, err := encryption.ExtractResourceID(ct)
		require.NoError(t, err)
		require.Equal(t, rid.String(), it.ResourceID, "the resource ID the SDKs' getResourceId gives")
		require.Equal(t, int(ct[0]), it.Format)
	}

	// Follow the advice: import the holders, audit again, decrypt.
	_, err = c.Import(context.Background(), []exitclient.Identity{{Value: bob, Line: 1}, {Value: carol, Line: 2}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	rep, _ = auditTree(t, c, in, audit.Options{})
	require.Equal(t, audit.Summary{Total: 14, Reachable: 10, Invalid: 4}, rep.Summary)
	out := filepath.Join(t.TempDir(), "clear")
	drep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 10, drep.Decrypted)
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err)
		require.Equal(t, clear, got, rel)
	}
}

// Records: many fields under one transparent session are one key to ask about; empty and
// null fields are not items; unreadable values are invalid.
func TestAuditRecords(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{})
	who, whoID := db.AddNamedUser("who")
	key := make([]byte, 32)
	session := encryption.SimpleID{4, 5, 6}
	db.Publish(who, session, key)
	var in strings.Builder
	in.WriteString("id,a,b\n")
	for i := range 12000 {
		ct, _, err := encryption.Encrypt(encryption.V10, key, []byte(fmt.Sprint(i)), encryption.EncryptOptions{SessionID: &session})
		require.NoError(t, err)
		fmt.Fprintf(&in, "%d,%s,\n", i, base64.RawURLEncoding.EncodeToString(ct))
	}
	in.WriteString("x,!!,AAAA\n")
	path := filepath.Join(t.TempDir(), "r.csv")
	write(t, path, []byte(in.String()))
	rep, items := auditRecords(t, c, path, audit.Options{Format: "csv", Fields: []string{"a", "b"}, Users: []string{"who"}})
	require.Equal(t, audit.Summary{Total: 12002, Missing: 12000, Invalid: 2}, rep.Summary)
	require.Equal(t, []audit.UserCount{{UserID: base64.StdEncoding.EncodeToString(whoID), User: "who", Resources: 12000}}, rep.MissingByUser)
	require.Equal(t, "1:a", items[0].Source)
	require.Equal(t, "12001:a", items[12000].Source)
	require.Equal(t, audit.Invalid, items[12001].Status)
	require.Equal(t, "12001:b", items[12001].Source)

	_, err := c.Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	rep, _ = auditRecords(t, c, path, audit.Options{Format: "csv", Fields: []string{"a"}})
	require.Equal(t, audit.Summary{Total: 12001, Reachable: 12000, Invalid: 1}, rep.Summary)
}
