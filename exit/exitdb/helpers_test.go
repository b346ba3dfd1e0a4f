package exitdb_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/chain/chaintest"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/pgtest"
)

// newDSN returns the DSN of a fresh, empty database on the test cluster.
func newDSN(t testing.TB) string {
	t.Helper()
	return pgtest.NewDB(t)
}

// createDumpSchema creates the tables and indexes of exit/dump/FORMAT.md, as the dump generator
// writes them (1_schema.sql and 3_indexes.sql).
func createDumpSchema(t testing.TB, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, sql := range []string{dump.SchemaSQL, dump.IndexesSQL} {
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err)
	}
}

// load inserts the rows of a World's dump, as a restored dump holds them.
func load(t testing.TB, dsn string, d *chaintest.Dump) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	copyRows := func(table string, cols []string, n int, row func(i int) []any) {
		if n == 0 {
			return
		}
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = append([]any{d.AppID}, row(i)...)
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, append([]string{"trustchain_id"}, cols...), pgx.CopyFromRows(rows))
		require.NoError(t, err, table)
	}
	_, err = conn.Exec(ctx, `INSERT INTO trustchains (id, public_signature_key, root_block, created_at) VALUES ($1, $2, $3, $4)`,
		d.AppID, d.AppPublicKey, d.RootBlock, base)
	require.NoError(t, err)
	copyRows("users", []string{"user_id", "encrypted_verification_key_for_user_secret", "created_at"}, len(d.Users), func(i int) []any {
		u := d.Users[i]
		return []any{u.UserID, u.EncryptedVerificationKey, at(i)}
	})
	copyRows("devices", []string{"device_id", "user_id", "is_ghost_device", "public_signature_key", "public_encryption_key",
		"user_public_encryption_key", "sealed_user_private_encryption_key", "block", "created_at"}, len(d.Devices), func(i int) []any {
		r := d.Devices[i]
		return []any{r.DeviceID, r.UserID, r.IsGhostDevice, r.PublicSignatureKey, r.PublicEncryptionKey,
			r.UserPublicEncryptionKey, r.SealedUserPrivateEncryptionKey, r.Block, at(i)}
	})
	copyRows("user_groups", []string{"group_id", "public_encryption_key", "nature", "block", "created_at"}, len(d.Groups), func(i int) []any {
		r := d.Groups[i]
		return []any{r.GroupID, r.PublicEncryptionKey, r.Nature, r.Block, at(i)}
	})
	copyRows("user_group_members", []string{"group_id", "user_id", "user_public_encryption_key", "sealed_group_private_encryption_key"},
		len(d.Members), func(i int) []any {
			r := d.Members[i]
			return []any{r.GroupID, r.UserID, r.UserPublicEncryptionKey, r.SealedGroupPrivateEncryptionKey}
		})
	copyRows("user_group_provisional_members", []string{"group_id", "app_public_signature_key", "tanker_public_signature_key",
		"two_times_sealed_group_private_encryption_key"}, len(d.ProvisionalMembers), func(i int) []any {
		r := d.ProvisionalMembers[i]
		return []any{r.GroupID, r.AppPublicSignatureKey, r.TankerPublicSignatureKey, r.TwoTimesSealedGroupPrivateEncryptionKey}
	})
	copyRows("key_publishes", []string{"resource_id", "nature", "recipient", "sealed_key", "author", "block", "created_at"},
		len(d.KeyPublishes), func(i int) []any {
			r := d.KeyPublishes[i]
			return []any{r.ResourceID, r.Nature, r.Recipient, r.SealedKey, r.Author, r.Block, at(i)}
		})
	copyRows("provisional_identity_claims", []string{"user_id", "app_public_signature_key", "tanker_public_signature_key",
		"user_public_encryption_key", "sealed_private_encryption_keys", "block", "created_at"}, len(d.Claims), func(i int) []any {
		r := d.Claims[i]
		return []any{r.UserID, r.AppPublicSignatureKey, r.TankerPublicSignatureKey, r.UserPublicEncryptionKey,
			r.SealedPrivateEncryptionKeys, r.Block, at(i)}
	})
	copyRows("tanker_provisional_keys", []string{"target", "hashed_value", "app_public_signature_key", "tanker_public_signature_key",
		"tanker_public_encryption_key", "tanker_private_signature_key", "tanker_private_encryption_key"},
		len(d.TankerProvisionalKeys), func(i int) []any {
			r := d.TankerProvisionalKeys[i]
			return []any{r.Target, r.HashedValue, r.AppPublicSignatureKey, r.TankerPublicSignatureKey,
				r.TankerPublicEncryptionKey, r.TankerPrivateSignatureKey, r.TankerPrivateEncryptionKey}
		})
}

// proxy is a TCP proxy to the test server that can be cut and restored,
// to play a database going away and coming back.
type proxy struct {
	t      testing.TB
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{t: t, target: target, addr: ln.Addr().String()}
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

// cut closes the listener and every proxied connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore listens again on the same address.
func (p *proxy) restore() {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.t, err)
	p.serve(ln)
}

func itoa(n int) string { return fmt.Sprint(n) }
