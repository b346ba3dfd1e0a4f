package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"sync"
	"time"

	"github.com/idvault/idvault/app/admin"
)

// maxSessions bounds the sessions kept in memory; the oldest goes first.
const maxSessions = 256

const cookieName = "idvault_console"

// session is one signed-in browser. The cookie holds only its random ID.
type session struct {
	csrf    string
	created time.Time
	expires time.Time
	// reveal is a secret waiting to be shown once (after a create or a token rotation).
	reveal *reveal
	// flash is a one-time notice for the next page.
	flash string
}

// reveal is what the page after a create or rotation shows, once.
type reveal struct {
	App       admin.AppView
	AppSecret string // empty after a rotation
	AuthToken string
}

type sessions struct {
	mu   sync.Mutex
	ttl  time.Duration
	max  int
	byID map[[sha256.Size]byte]*session
	now  func() time.Time
}

func newSessions(ttl time.Duration, max int) *sessions {
	return &sessions{ttl: ttl, max: max, byID: map[[sha256.Size]byte]*session{}, now: time.Now}
}

// key is the map key of a session ID: its digest, so that lookups do not compare the ID itself
// byte by byte against stored IDs.
func key(id string) [sha256.Size]byte { return sha256.Sum256([]byte(id)) }

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session and returns its ID.
func (s *sessions) create() (string, *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, v := range s.byID {
		if now.After(v.expires) {
			delete(s.byID, k)
		}
	}
	for len(s.byID) >= s.max {
		var oldest [sha256.Size]byte
		var at time.Time
		for k, v := range s.byID {
			if at.IsZero() || v.created.Before(at) {
				oldest, at = k, v.created
			}
		}
		delete(s.byID, oldest)
	}
	id := randomToken()
	sess := &session{csrf: randomToken(), created: now, expires: now.Add(s.ttl)}
	s.byID[key(id)] = sess
	return id, sess
}

// get returns the live session with that ID, or nil.
func (s *sessions) get(id string) *session {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.byID[key(id)]
	if sess == nil || s.now().After(sess.expires) {
		delete(s.byID, key(id))
		return nil
	}
	return sess
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, key(id))
}

// takeReveal returns the pending reveal of the app whose URL ID is urlID and forgets it: a
// secret is shown once. A reveal of another app stays pending (a stale tab reloading an older
// app's secret page must not throw away the new app's secret, which cannot be shown again).
func (s *sessions) takeReveal(sess *session, urlID string) *reveal {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := sess.reveal
	if r == nil || r.App.URLID != urlID {
		return nil
	}
	sess.reveal = nil
	return r
}

// pendingCreation returns the pending reveal of a creation (not a rotation) of an app named
// name (case-insensitively, as names are compared), without taking it; nil when there is none.
func (s *sessions) pendingCreation(sess *session, name string) *reveal {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := sess.reveal
	if r == nil || r.AppSecret == "" || !strings.EqualFold(r.App.Name, name) {
		return nil
	}
	return r
}

func (s *sessions) setReveal(sess *session, r *reveal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.reveal = r
}

func (s *sessions) takeFlash(sess *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := sess.flash
	sess.flash = ""
	return f
}

func (s *sessions) setFlash(sess *session, f string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.flash = f
}

// csrfOK compares a submitted CSRF token with the session's in constant time.
func csrfOK(sess *session, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}
