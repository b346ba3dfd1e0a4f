package idtoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDocument bounds the discovery document and the key set read from the provider.
const maxDocument = 1 << 20

// keySet is the provider's published keys, fetched lazily: the discovery document (for its
// jwks_uri) and the key set are first fetched when a token needs them, so the server starts
// and serves everything else while the provider is down. It implements go-oidc's KeySet; the
// signature itself is checked by go-jose.
//
// Fetches: one at a time (concurrent callers share it); after a failure none for
// retryAfterFailure (callers get the failure at once); a token whose kid is not in the cached
// set triggers a refetch at most once per refetchInterval, so a flood of random kids costs the
// provider one request per interval.
//
// A fetched set is used for its age: the max-age of the key set's Cache-Control (less its Age
// header, from a cache on the way), bounded by minAge and maxAge (identity_server.oidc
// keys_min_age, keys_max_age). From three quarters of its age on, a use refreshes it in the
// background; past its age, a use waits for the refresh, so a key the provider removed is
// refused within the age while the provider answers. If the refresh fails, the old set is kept
// (and the failure logged), and refreshed in the background until a fetch succeeds: an outage
// of the provider neither stops tokens under known keys nor makes each request wait.
type keySet struct {
	issuer string
	algs   []jose.SignatureAlgorithm
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	refetchInterval, minAge, maxAge, retryAfterFailure time.Duration

	mu          sync.Mutex
	jwksURL     string              // from discovery; "" until found
	keys        []jose.JSONWebKey   // nil until the first fetch succeeds
	loadedAt    time.Time           // when keys were fetched
	ttl         time.Duration       // how long they are used: Cache-Control max-age, bounded
	lastRefetch time.Time           // the last refetch for an unknown kid
	failedAt    time.Time           // the last failed fetch
	lastErr     error               // its error
	inflight    *fetchCall          // the fetch running now, if any
	fetches     func(result string) // counts fetches by result ("ok", "failed")
}

// fetchCall is one fetch that concurrent callers wait for.
type fetchCall struct {
	done chan struct{}
	err  error
}

// errUnknownKey: no key of the set has the token's kid (after any refetch allowed).
var errUnknownKey = errors.New("idtoken: signed by a key the provider does not publish")

// VerifySignature is go-oidc's KeySet: it returns the payload of a token signed by one of the
// provider's keys. What went wrong is recorded in the verification state of ctx, since go-oidc
// flattens the error into text.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	st, _ := ctx.Value(stateKey{}).(*state)
	if st == nil {
		st = &state{}
	}
	jws, err := jose.ParseSignedCompact(raw, k.algs) // an ID token is a compact JWS: no JSON form, no unprotected header
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("idtoken: want exactly one signature")
	}
	st.reached = true
	h := jws.Signatures[0].Header
	st.typ, _ = h.ExtraHeaders[jose.HeaderType].(string)
	keys, err := k.current(ctx)
	if err != nil {
		st.unavailable, st.retryAfter = err, k.retryIn()
		return nil, err
	}
	payload, known, err := verifyWith(jws, keys, h)
	if !known || (h.KeyID == "" && err != nil) {
		// A kid the cached set does not hold (or, for a token without kid, no cached key
		// verifies it): the provider may have rotated its keys.
		refetched, ferr := k.refetch(ctx)
		switch {
		case ferr != nil:
			st.unavailable, st.retryAfter = ferr, k.retryIn()
			return nil, ferr
		case refetched:
			payload, known, err = verifyWith(jws, k.snapshot(), h)
		}
	}
	switch {
	case !known:
		st.reason = "signed by a key the provider does not publish (unknown kid)"
		return nil, errUnknownKey
	case err != nil:
		st.reason = "bad signature"
		return nil, err
	}
	st.payload = payload
	return payload, nil
}

// verifyWith checks the signature with the keys that may have made it: the token's kid (any
// key when it has none), a signing key, of the token's algorithm when the key names one. known
// is false when no key qualifies.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, h jose.Header) (payload []byte, known bool, err error) {
	err = errors.New("idtoken: no key verifies the signature")
	for _, key := range keys {
		if (h.KeyID != "" && key.KeyID != h.KeyID) || (key.Use != "" && key.Use != "sig") ||
			(key.Algorithm != "" && key.Algorithm != h.Algorithm) {
			continue
		}
		known = true
		if p, verr := jws.Verify(key); verr == nil {
			return p, true, nil
		}
	}
	return nil, known, err
}

func (k *keySet) snapshot() []jose.JSONWebKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys
}

// current returns the cached keys, fetching them on first use; from three quarters of their
// age on it refreshes them in the background, and past their age it waits for the refresh
// (the old set is kept when that fails: run logs the failure). While the last fetch failed, a
// set past its age is used at once and refreshed in the background: during an outage of the
// provider, requests do not each wait for a connection that times out.
func (k *keySet) current(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	keys, age, ttl, failing := k.keys, k.now().Sub(k.loadedAt), k.ttl, k.lastErr != nil
	if keys != nil && (age > ttl-ttl/4 && age <= ttl || age > ttl && failing) {
		k.start()
	}
	k.mu.Unlock()
	if keys != nil && (age <= ttl || failing) {
		return keys, nil
	}
	if err := k.fetch(ctx); err != nil {
		if keys != nil {
			return keys, nil
		}
		return nil, err
	}
	return k.snapshot(), nil
}

// refetch fetches the set again for an unknown kid, unless one such refetch happened within
// refetchInterval. It reports whether the set was fetched. A refetch running already is joined:
// the choice and the call are taken under one lock, so that a fetch ending meanwhile does not
// make a caller start another.
func (k *keySet) refetch(ctx context.Context) (bool, error) {
	k.mu.Lock()
	if k.inflight == nil {
		if !k.lastRefetch.IsZero() && k.now().Sub(k.lastRefetch) < k.refetchInterval {
			k.mu.Unlock()
			return false, nil
		}
		k.lastRefetch = k.now()
	}
	return true, k.await(ctx)
}

// fetch runs one fetch, or waits for the one running; within retryAfterFailure of a failure
// it returns that failure without asking the provider.
func (k *keySet) fetch(ctx context.Context) error {
	k.mu.Lock()
	return k.await(ctx)
}

// await is fetch's and refetch's end: with k.mu held (it unlocks it), it joins the fetch
// running or starts one, and waits for it.
func (k *keySet) await(ctx context.Context) error {
	c := k.start()
	if c == nil {
		err := k.lastErr
		k.mu.Unlock()
		return err
	}
	k.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return fmt.Errorf("idtoken: waiting for the provider's keys: %w", ctx.Err())
	}
}

// retryIn is how long after a failed fetch the provider is not asked again (0 once that has
// passed).
func (k *keySet) retryIn() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastErr == nil {
		return 0
	}
	return max(k.retryAfterFailure-k.now().Sub(k.failedAt), 0)
}

// start returns the fetch in flight, or starts one; nil within retryAfterFailure of a failed
// fetch. k.mu must be held.
func (k *keySet) start() *fetchCall {
	if k.inflight != nil {
		return k.inflight
	}
	if k.lastErr != nil && k.now().Sub(k.failedAt) < k.retryAfterFailure {
		return nil
	}
	k.inflight = &fetchCall{done: make(chan struct{})}
	go k.run(k.inflight)
	return k.inflight
}

// run fetches discovery (once) and the key set, on its own context so that a caller that
// gives up does not fail the others.
func (k *keySet) run(c *fetchCall) {
	keys, jwksURL, ttl, err := k.download(context.Background())
	k.mu.Lock()
	if err != nil {
		k.failedAt, k.lastErr = k.now(), err
	} else {
		k.keys, k.loadedAt, k.ttl, k.jwksURL, k.lastErr = keys, k.now(), ttl, jwksURL, nil
	}
	k.inflight = nil
	c.err = err
	k.mu.Unlock()
	if err != nil {
		k.fetches("failed")
		k.log.Warn("oidc: cannot fetch the identity provider's keys", "issuer", k.issuer, "err", err)
	} else {
		k.fetches("ok")
		k.log.Info("oidc: identity provider keys fetched", "issuer", k.issuer, "keys", len(keys), "used_for", ttl.String())
	}
	close(c.done)
}

// download reads the jwks_uri from discovery when not known yet, then the key set, and says
// how long the set may be used (keyAge).
func (k *keySet) download(ctx context.Context) ([]jose.JSONWebKey, string, time.Duration, error) {
	k.mu.Lock()
	jwksURL := k.jwksURL
	k.mu.Unlock()
	if jwksURL == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if _, err := k.getJSON(ctx, strings.TrimSuffix(k.issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
			return nil, "", 0, fmt.Errorf("idtoken: discovery: %w", err)
		}
		if doc.Issuer != k.issuer {
			return nil, "", 0, fmt.Errorf("idtoken: discovery: the provider calls itself %q, not identity_server.oidc.issuer %q", doc.Issuer, k.issuer)
		}
		if err := checkKeysURL(doc.JWKSURI, onLoopback(k.issuer)); err != nil {
			return nil, "", 0, fmt.Errorf("idtoken: discovery: %w", err)
		}
		jwksURL = doc.JWKSURI
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	header, err := k.getJSON(ctx, jwksURL, &set)
	if err != nil {
		return nil, "", 0, fmt.Errorf("idtoken: key set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		// Keys of unknown types, private or invalid keys are left out, not fatal: a provider
		// may publish encryption keys or new key types beside its signing keys.
		if err := key.UnmarshalJSON(raw); err != nil || !key.Valid() || !key.IsPublic() {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, "", 0, fmt.Errorf("idtoken: key set %s holds no usable public key", jwksURL)
	}
	return keys, jwksURL, keyAge(header, k.minAge, k.maxAge), nil
}

// getJSON reads one JSON document of at most maxDocument bytes, and returns the answer's
// header.
func (k *keySet) getJSON(ctx context.Context, target string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", target, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	if len(body) > maxDocument {
		return nil, fmt.Errorf("GET %s: over %d bytes", target, maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON document: %w", target, err)
	}
	return resp.Header, nil
}

// keyAge is how long a key set fetched with header may be used: its Cache-Control max-age less
// its Age (the time it spent in a cache on the way), bounded by minAge and maxAge. no-store,
// no-cache or max-age=0 give minAge; no max-age (or one that does not parse) gives maxAge.
func keyAge(header http.Header, minAge, maxAge time.Duration) time.Duration {
	ttl := maxAge
	for _, line := range header.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return minAge
			case "max-age":
				secs, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(value), `"`), 10, 64)
				if err != nil || secs < 0 {
					continue
				}
				if age, err := strconv.ParseInt(strings.TrimSpace(header.Get("Age")), 10, 64); err == nil && age > 0 {
					secs -= min(age, secs)
				}
				ttl = time.Duration(min(secs, int64(maxAge/time.Second)+1)) * time.Second
			}
		}
	}
	return min(max(ttl, minAge), maxAge)
}
