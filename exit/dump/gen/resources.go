package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

func isStream(v encryption.Version) bool  { return v.IsStream() }
func isSession(v encryption.Version) bool { return v.IsTransparentSession() }

// sessionSpan resources in a row share one transparent session (formats 9 to 11).
const sessionSpan = 4

// session is the shared encryption session of a window of resources.
type session struct {
	key     []byte
	id      encryption.SimpleID
	creator int
}

func (g *gen) session(a *app, w int) session {
	r := itemRNG(g.opts.Seed, a.label+"/session", w)
	var s session
	s.key = r.bytes(32)
	copy(s.id[:], r.bytes(16))
	s.creator = r.intn(a.users)
	return s
}

func (g *gen) format(i int) encryption.Version { return g.opts.Formats[i%len(g.opts.Formats)] }

// resourceItem makes ordinary resource i: clear data of a random size class, encrypted in
// the format of its turn, published to its creator and often shared with other users, a
// group or a provisional identity. Resources of formats 9 to 11 in the same window share a
// session whose key is published once, under the session ID; some are also shared alone,
// under their seed. For decoy apps no file is written, and the main app's resources plant
// key publishes with wrong keys under their resource IDs in the decoy apps.
func (g *gen) resourceItem(a *app, i int, s *sink) error {
	if a.users == 0 {
		return nil
	}
	r := itemRNG(g.opts.Seed, a.label+"/res", i)
	res, err := g.encryptResource(a, i, r)
	if err != nil {
		return err
	}
	when := at(4, i)
	dataKey, err := g.publishResource(s, a, i, res, r, when)
	if err != nil {
		return err
	}
	if !a.main {
		return nil
	}
	if len(g.decoys) > 0 && i%5 == 0 {
		if err := g.plantDecoy(s, g.decoys[i%len(g.decoys)], res.rid.Lookups()[0], res.creator.userPub, r, when); err != nil {
			return err
		}
	}
	name := fmt.Sprintf("%s/%07d.v%d", dump.DataDir, i, res.v)
	return g.emit(s, name, res.ct, int(res.v), res.rid, res.clear, a.userEmail(res.creatorIdx), dump.ExpectOK, "", dataKey)
}

// resource is an ordinary resource once encrypted.
type resource struct {
	v          encryption.Version
	creatorIdx int
	creator    userRec
	sess       session // in a session format
	clear, key []byte  // key is the session's in a session format
	ct         []byte
	rid        encryption.ResourceID
}

// encryptResource draws ordinary resource i's creator (its session's in a session format),
// size, clear text and key, and encrypts it.
func (g *gen) encryptResource(a *app, i int, r *rng) (*resource, error) {
	res := &resource{v: g.format(i), creatorIdx: r.intn(a.users)}
	if isSession(res.v) {
		res.sess = g.session(a, i/sessionSpan)
		res.creatorIdx = res.sess.creator
	}
	var err error
	if res.creator, err = a.user(res.creatorIdx); err != nil {
		return nil, err
	}
	opts := encryption.EncryptOptions{Rand: r, Padding: pickPadding(res.v, r)}
	size := pickSize(r)
	if isStream(res.v) && r.chance(50) {
		opts.ChunkSize = 256 + r.intn(4096)
		size = opts.ChunkSize*2 + r.intn(opts.ChunkSize*3) // several chunks
	}
	res.clear = r.bytes(size)
	res.key = r.bytes(32)
	if isSession(res.v) {
		res.key = res.sess.key
		opts.SessionID = &res.sess.id
	}
	if res.ct, res.rid, err = encryption.Encrypt(res.v, res.key, res.clear, opts); err != nil {
		return nil, err
	}
	return res, nil
}

// publishResource publishes the key of ordinary resource i and returns the key of its data.
// In a session format, the first resource of the window shares the session key under the
// session ID, and some resources also share their subkey alone, under their seed; otherwise
// the resource's key is shared under its ID.
func (g *gen) publishResource(s *sink, a *app, i int, res *resource, r *rng, when time.Time) ([]byte, error) {
	if !isSession(res.v) {
		if err := g.share(s, a, res.creator, res.rid.ID, res.key, r, when); err != nil {
			return nil, err
		}
		return res.key, nil
	}
	dataKey, err := encryption.DeriveSubkey(res.sess.key, res.rid.Seed)
	if err != nil {
		return nil, err
	}
	if g.firstInSession(i) {
		if err := g.share(s, a, res.creator, res.sess.id, res.sess.key, r, when); err != nil {
			return nil, err
		}
	}
	if r.chance(25) { // shared alone: the subkey under the seed
		u, err := a.user(r.intn(a.users))
		if err != nil {
			return nil, err
		}
		if err := g.publishToUser(s, a, res.creator, res.rid.Seed, dataKey, u.userPub, r, when); err != nil {
			return nil, err
		}
	}
	return dataKey, nil
}

// share publishes key k under id to the creator and to 0 to 4 other users, and sometimes to
// a group and to a provisional identity.
func (g *gen) share(s *sink, a *app, creator userRec, id encryption.SimpleID, k []byte, r *rng, when time.Time) error {
	if err := g.publishToUser(s, a, creator, id, k, creator.userPub, r, when); err != nil {
		return err
	}
	for n := r.intn(5); n > 0; n-- { // 0 to 4 other users, 2 on average
		u, err := a.user(r.intn(a.users))
		if err != nil {
			return err
		}
		if err := g.publishToUser(s, a, creator, id, k, u.userPub, r, when); err != nil {
			return err
		}
	}
	if a.groups > 0 && r.chance(40) {
		gi := r.intn(a.groups)
		gk, err := a.groupRecs.get(gi)
		if err != nil {
			return err
		}
		if err := g.publishToGroup(s, a, creator, id, k, [32]byte(gk), r, when); err != nil {
			return err
		}
	}
	if r.chance(25) {
		if pi := a.pickProv(r); pi >= 0 {
			p, err := a.prov(pi)
			if err != nil {
				return err
			}
			if err := g.publishToProvisional(s, a, creator, id, k, p, r, when); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstInSession reports whether resource i is the first of its window in a session format.
func (g *gen) firstInSession(i int) bool {
	for j := i - i%sessionSpan; j < i; j++ {
		if isSession(g.format(j)) {
			return false
		}
	}
	return true
}

// plantDecoy writes, in decoy app d, a key publish under a main resource's ID, sealed for
// the main creator's user key but holding a wrong key: a reader that ignores trustchain_id
// would find it and fail to decrypt.
func (g *gen) plantDecoy(s *sink, d *app, id encryption.SimpleID, recipient [32]byte, r *rng, when time.Time) error {
	author, err := d.user(r.intn(d.users))
	if err != nil {
		return err
	}
	return g.publishToUser(s, d, author, id, r.bytes(32), recipient, r, when)
}

func pickSize(r *rng) int {
	switch c := r.intn(100); {
	case c < 10:
		return 0
	case c < 70:
		return 1 + r.intn(256)
	case c < 95:
		return 257 + r.intn(8192-257)
	default:
		return 8192 + r.intn(64<<10)
	}
}

func pickPadding(v encryption.Version, r *rng) encryption.Padding {
	if !v.IsPadded() {
		return encryption.PaddingAuto
	}
	switch r.intn(4) {
	case 0, 1:
		return encryption.PaddingAuto
	case 2:
		return encryption.PaddingOff
	default:
		return encryption.PaddingStep(uint32(2 + r.intn(500)))
	}
}

// emit writes a ciphertext file and its manifest (and key) lines.
func (g *gen) emit(s *sink, name string, ct []byte, format int, rid encryption.ResourceID, clear []byte, creator, expected, kase string, key []byte) error {
	if err := writeNew(filepath.Join(g.dir, name), ct, false); err != nil {
		return err
	}
	sum := sha256.Sum256(clear)
	g.manifestLine(s, dump.ManifestEntry{File: name, Format: format, ResourceID: ridString(rid), ClearSize: int64(len(clear)),
		SHA256: hex.EncodeToString(sum[:]), Creator: creator, Expected: expected, Case: kase}, key)
	return nil
}

func (g *gen) manifestLine(s *sink, e dump.ManifestEntry, key []byte) {
	s.manifest = appendJSONLine(s.manifest, e)
	if e.Expected == dump.ExpectOK {
		s.resources++
		// Paths relative to decrypt's --out, which mirrors data/.
		s.sums = fmt.Appendf(s.sums, "%s  %s\n", e.SHA256, strings.TrimPrefix(e.File, dump.DataDir+"/"))
	} else {
		s.negatives++
	}
	if g.opts.WriteKeys {
		s.keys = appendJSONLine(s.keys, dump.KeyEntry{File: e.File, Key: base64.StdEncoding.EncodeToString(key)})
	}
}

func ridString(rid encryption.ResourceID) string {
	if rid == (encryption.ResourceID{}) {
		return ""
	}
	return rid.String()
}

// publishToUser writes a key publish to a user (nature 8) authored by author's device.
func (g *gen) publishToUser(s *sink, a *app, author userRec, id encryption.SimpleID, key []byte, recipient [32]byte, r io.Reader, when time.Time) error {
	act := &block.KeyPublishAction{Recipient: recipient, ResourceID: id}
	if err := sealInto(act.SealedKey[:], key, &recipient, r); err != nil {
		return err
	}
	g.keyPublishRow(s, a, author, act, recipient[:], act.SealedKey[:], id, when)
	return nil
}

// publishToGroup writes a key publish to a group (nature 11).
func (g *gen) publishToGroup(s *sink, a *app, author userRec, id encryption.SimpleID, key []byte, groupPub [32]byte, r io.Reader, when time.Time) error {
	act := &block.KeyPublishAction{ToGroup: true, Recipient: groupPub, ResourceID: id}
	if err := sealInto(act.SealedKey[:], key, &groupPub, r); err != nil {
		return err
	}
	g.keyPublishRow(s, a, author, act, groupPub[:], act.SealedKey[:], id, when)
	return nil
}

// publishToProvisional writes a key publish to a provisional identity (nature 13).
func (g *gen) publishToProvisional(s *sink, a *app, author userRec, id encryption.SimpleID, key []byte, p provRec, r io.Reader, when time.Time) error {
	act := &block.KeyPublishToProvisionalUserAction{AppPublicSignatureKey: p.appSigPub, TankerPublicSignatureKey: p.tankerSigPub, ResourceID: id}
	sealed, err := keys.SealTwice(key, &p.appEncPub, &p.tankerEncPub, r)
	if err != nil {
		return err
	}
	copy(act.TwoTimesSealedKey[:], sealed)
	recipient := append(append([]byte{}, p.appSigPub[:]...), p.tankerSigPub[:]...)
	g.keyPublishRow(s, a, author, act, recipient, sealed, id, when)
	return nil
}

func (g *gen) keyPublishRow(s *sink, a *app, author userRec, act block.Action, recipient, sealed []byte, id encryption.SimpleID, when time.Time) {
	b := block.New(a.id, act, author.devID)
	b.Sign(author.devSig)
	s.add(tKeyPublishes, s.rowFor(tKeyPublishes).bytea(a.id[:]).bytea(id[:]).integer(int64(b.Nature)).bytea(recipient).
		bytea(sealed).bytea(author.devID[:]).bytea(b.Serialize()).timestamp(when).end())
	s.natures[int(b.Nature)]++
}

// bigItem makes big resource i: 2 to 5 MiB in a stream format with 1 MiB chunks, streamed to
// its file (the clear text is never held whole).
func (g *gen) bigItem(a *app, i int, s *sink) error {
	r := itemRNG(g.opts.Seed, "main/big", i)
	v := g.bigFormat(i)
	creatorIdx := r.intn(a.users)
	creator, err := a.user(creatorIdx)
	if err != nil {
		return err
	}
	size := 2<<20 + r.intn(3<<20)
	key := r.bytes(32)
	name := fmt.Sprintf("%s/big%04d.v%d", dump.DataDir, i, v)
	// The clear text comes from its own source so that the encryptor's draws (IVs, IDs)
	// do not depend on how the clear text is cut into writes.
	clearSrc := itemRNG(g.opts.Seed, "main/big-clear", i)
	rid, sum, err := writeBig(filepath.Join(g.dir, name), v, key, size, r, clearSrc)
	if err != nil {
		return err
	}
	dataKey := key
	lookup := rid.ID
	if isSession(v) {
		if dataKey, err = encryption.DeriveSubkey(key, rid.Seed); err != nil {
			return err
		}
	}
	if err := g.publishToUser(s, a, creator, lookup, key, creator.userPub, r, at(5, i)); err != nil {
		return err
	}
	g.manifestLine(s, dump.ManifestEntry{File: name, Format: int(v), ResourceID: rid.String(), ClearSize: int64(size),
		SHA256: hex.EncodeToString(sum), Creator: a.userEmail(creatorIdx), Expected: dump.ExpectOK}, dataKey)
	return nil
}

// bigFormat is big resource i's format: the stream formats asked for in turn (4, 8 and 11
// when none is).
func (g *gen) bigFormat(i int) encryption.Version {
	var streams []encryption.Version
	for _, v := range g.opts.Formats {
		if isStream(v) {
			streams = append(streams, v)
		}
	}
	if len(streams) == 0 {
		streams = []encryption.Version{encryption.V4, encryption.V8, encryption.V11}
	}
	return streams[i%len(streams)]
}

// writeBig creates path and writes to it size bytes of clear text from clearSrc, encrypted
// in format v under key with the encryptor drawing from r, 64 KiB at a time. It returns the
// resource ID and the clear text's SHA-256.
func writeBig(path string, v encryption.Version, key []byte, size int, r, clearSrc *rng) (encryption.ResourceID, []byte, error) {
	f, err := createNew(path)
	if err != nil {
		return encryption.ResourceID{}, nil, err
	}
	defer f.Close()
	ew, err := encryption.NewEncryptWriter(f, v, key, encryption.EncryptOptions{Rand: r, Padding: pickPadding(v, r)})
	if err != nil {
		return encryption.ResourceID{}, nil, err
	}
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for left := size; left > 0; {
		n := min(left, len(buf))
		_, _ = clearSrc.Read(buf[:n])
		h.Write(buf[:n])
		if _, err := ew.Write(buf[:n]); err != nil {
			return encryption.ResourceID{}, nil, err
		}
		left -= n
	}
	if err := ew.Close(); err != nil {
		return encryption.ResourceID{}, nil, err
	}
	if err := f.Close(); err != nil {
		return encryption.ResourceID{}, nil, err
	}
	return ew.ResourceID(), h.Sum(nil), nil
}

// negative is one broken ciphertext of the manifest.
type negative struct {
	kase     string
	format   encryption.Version
	expected string
}

// negatives lists the negative cases made for the formats asked for.
func (g *gen) negatives() []negative {
	var out []negative
	for _, v := range g.opts.Formats {
		out = append(out, negative{"tampered", v, dump.ExpectDecryptionFailed})
	}
	for _, v := range g.opts.Formats {
		out = append(out, negative{"truncated", v, dump.ExpectTruncatedData})
		if isStream(v) {
			out = append(out, negative{"stream_cut_before_final_chunk", v, dump.ExpectDecryptionFailed})
		}
	}
	v0 := g.opts.Formats[0]
	out = append(out,
		negative{"unknown_format_12", v0, dump.ExpectUnsupportedFormat},
		negative{"unknown_format_0", v0, dump.ExpectUnsupportedFormat},
		negative{"key_published_to_nobody", v0, dump.ExpectKeyNotFound},
		negative{"key_only_for_withheld_provisional_identity", v0, dump.ExpectKeyNotFound},
	)
	if len(g.decoys) > 0 {
		out = append(out, negative{"key_only_in_decoy_app", v0, dump.ExpectKeyNotFound})
	}
	return out
}

// negativeItem makes negative case i: a ciphertext made like an ordinary one, then broken
// (or its key published where no imported identity reaches).
func (g *gen) negativeItem(a *app, i int, s *sink) error {
	n := g.negatives()[i]
	r := itemRNG(g.opts.Seed, "main/neg", i)
	creatorIdx := r.intn(a.users)
	creator, err := a.user(creatorIdx)
	if err != nil {
		return err
	}
	v := n.format
	opts := encryption.EncryptOptions{Rand: r}
	size := 64 + r.intn(200)
	if n.kase == "stream_cut_before_final_chunk" {
		opts.ChunkSize = 256
		size = 256 * 4
	}
	clear := r.bytes(size)
	key := r.bytes(32)
	ct, rid, err := encryption.Encrypt(v, key, clear, opts)
	if err != nil {
		return err
	}
	lookup, dataKey := rid.ID, key
	if isSession(v) {
		if dataKey, err = encryption.DeriveSubkey(key, rid.Seed); err != nil {
			return err
		}
	}
	if ct, rid, err = breakCiphertext(n.kase, v, ct, rid, dataKey, opts.ChunkSize); err != nil {
		return fmt.Errorf("negative case %d: %w", i, err)
	}
	if err := g.publishNegative(s, a, n.kase, creator, lookup, key, r, at(6, i)); err != nil {
		return err
	}
	creatorEmail := a.userEmail(creatorIdx)
	if n.kase == "key_published_to_nobody" || n.kase == "key_only_in_decoy_app" {
		creatorEmail = ""
	}
	name := fmt.Sprintf("%s/neg%03d-%s.v%d", dump.DataDir, i, n.kase, v)
	return g.emit(s, name, ct, int(ct[0]), rid, clear, creatorEmail, n.expected, n.kase, dataKey)
}

// breakCiphertext breaks ciphertext ct of format v as negative case kase asks, and returns
// it with the resource ID the manifest gives (none once the header is gone). The cases of
// keys leave it whole.
func breakCiphertext(kase string, v encryption.Version, ct []byte, rid encryption.ResourceID, dataKey []byte, chunkSize int) ([]byte, encryption.ResourceID, error) {
	switch kase {
	case "tampered":
		out, err := tamper(ct, dataKey)
		if err != nil {
			return nil, rid, err
		}
		return out, rid, nil
	case "truncated":
		return ct[:10], encryption.ResourceID{}, nil // shorter than any format's header or overhead
	case "stream_cut_before_final_chunk":
		header := 0
		if v == encryption.V11 {
			header = 37
		}
		return ct[:header+chunkSize*2], rid, nil // two whole chunks, the rest gone
	case "unknown_format_12":
		ct[0] = 12
		return ct, encryption.ResourceID{}, nil
	case "unknown_format_0":
		ct[0] = 0
		return ct, encryption.ResourceID{}, nil
	}
	return ct, rid, nil
}

// publishNegative publishes the key of a negative case under lookup: to its creator, or for
// the cases of keys only where no imported identity reaches (nowhere, the withheld
// provisional identity, a decoy app).
func (g *gen) publishNegative(s *sink, a *app, kase string, creator userRec, lookup encryption.SimpleID, key []byte, r *rng, when time.Time) error {
	switch kase {
	case "key_published_to_nobody":
		return nil
	case "key_only_for_withheld_provisional_identity":
		p, err := a.prov(a.withheld)
		if err != nil {
			return err
		}
		return g.publishToProvisional(s, a, creator, lookup, key, p, r, when)
	case "key_only_in_decoy_app":
		author, err := g.decoys[0].user(0)
		if err != nil {
			return err
		}
		// Sealed for the main creator's own user key: only trustchain_id keeps it out.
		return g.publishToUser(s, g.decoys[0], author, lookup, key, creator.userPub, r, when)
	}
	return g.publishToUser(s, a, creator, lookup, key, creator.userPub, r, when)
}

// tamper flips one byte of the encrypted body, keeping the format and resource ID, so that
// the key is found but authentication fails.
func tamper(ct, key []byte) ([]byte, error) {
	_, rid, err := encryption.ExtractResourceID(ct)
	if err != nil {
		return nil, err
	}
	for _, pos := range []int{len(ct) / 2, len(ct) - 20, 1 + 24, 40, len(ct) - 1} {
		if pos <= 0 || pos >= len(ct) {
			continue
		}
		out := bytes.Clone(ct)
		out[pos] ^= 0x5a
		_, rid2, err := encryption.ExtractResourceID(out)
		if err != nil || rid2 != rid {
			continue
		}
		_, err = dump.DecryptWithDataKey(key, out)
		if errors.Is(err, encryption.ErrDecryptionFailed) && !errors.Is(err, encryption.ErrTruncated) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no byte to tamper with in a %d-byte ciphertext", len(ct))
}
