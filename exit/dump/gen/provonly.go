package gen

import (
	"errors"
	"fmt"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/encryption"
)

// provisionalOnlyItem makes resource i of Options.ProvisionalOnly: its key is published to one
// provisional identity nobody claimed, of identities.jsonl, and to no user (as Tanker's
// encrypt with shareWithSelf false and that identity as the only recipient), so that importing
// that provisional identity is the only way to it. Formats 9 to 11 get a session of their own.
// The manifest names its creator, who holds no key of it.
func (g *gen) provisionalOnlyItem(a *app, i int, s *sink) error {
	r := itemRNG(g.opts.Seed, "main/prov-only", i)
	pi := a.pickUnclaimedProv(r)
	if pi < 0 {
		return errors.New("no provisional identity is left unclaimed for them: give at least 3 provisional identities")
	}
	p, err := a.prov(pi)
	if err != nil {
		return err
	}
	creatorIdx := r.intn(a.users)
	creator, err := a.user(creatorIdx)
	if err != nil {
		return err
	}
	v := g.format(i)
	opts := encryption.EncryptOptions{Rand: r, Padding: pickPadding(v, r)}
	key := r.bytes(32)
	var session encryption.SimpleID
	if isSession(v) {
		copy(session[:], r.bytes(16))
		opts.SessionID = &session
	}
	clear := r.bytes(pickSize(r))
	ct, rid, err := encryption.Encrypt(v, key, clear, opts)
	if err != nil {
		return err
	}
	dataKey := key
	if isSession(v) {
		if dataKey, err = encryption.DeriveSubkey(key, rid.Seed); err != nil {
			return err
		}
	}
	if err := g.publishToProvisional(s, a, creator, rid.ID, key, p, r, at(7, i)); err != nil {
		return err
	}
	name := fmt.Sprintf("%s/%s%04d.v%d", dump.DataDir, dump.ProvisionalOnlyName, i, v)
	return g.emit(s, name, ct, int(v), rid, clear, a.userEmail(creatorIdx), dump.ExpectOK, "", dataKey)
}

// pickUnclaimedProv returns a provisional identity that provItem leaves unclaimed (an odd one)
// and writes to identities.jsonl (not the withheld one), or -1 when there is none.
func (a *app) pickUnclaimedProv(r *rng) int {
	n := a.provs / 2 // the odd indices below provs
	if a.withheld >= 0 && a.withheld%2 == 1 {
		n-- // the withheld one is the last
	}
	if n <= 0 {
		return -1
	}
	return 2*r.intn(n) + 1
}
