package netguard

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordingConn records the read deadline put on it; its reads return at once.
type recordingConn struct {
	net.Conn
	deadline time.Time
	sets     int
}

func (r *recordingConn) SetReadDeadline(t time.Time) error {
	r.deadline, r.sets = t, r.sets+1
	return nil
}

func (r *recordingConn) Read(p []byte) (int, error) { return len(p), nil }

// A read runs under the last deadline asked for before it, or one earlier by at most an
// eighth of the time that was left until it: never a later one, never none when one was asked.
// Fasthttp's pattern (idle limit, then read limit, per request) and random asks, cuts and
// removals alike.
func TestReadsRunUnderTheLastDeadlineAsked(t *testing.T) {
	t.Parallel()
	rec := &recordingConn{}
	c := &Conn{Conn: rec, born: time.Now()}
	rng := rand.New(rand.NewPCG(1, 2))
	var asked, askedAt time.Time
	for i := range 20000 {
		now := time.Now()
		switch k := rng.IntN(10); {
		case k < 4: // fasthttp's idle and read limits
			asked = now.Add([]time.Duration{60 * time.Second, 10 * time.Second}[k%2])
		case k < 8:
			asked = now.Add(time.Duration(rng.Int64N(int64(time.Hour))) + time.Millisecond)
		case k == 8:
			asked = now.Add(-time.Second) // a cut
		default:
			asked = time.Time{} // no deadline
		}
		askedAt = now
		require.NoError(t, c.SetReadDeadline(asked))
		if rng.IntN(3) == 0 {
			continue // asked again before any read
		}
		_, err := c.Read(make([]byte, 1))
		require.NoError(t, err)
		got := rec.deadline
		switch {
		case asked.IsZero() || !asked.After(askedAt):
			require.True(t, got.Equal(asked), "step %d: asked %v, the read ran under %v", i, asked, got)
		default:
			require.False(t, got.IsZero(), "step %d: a deadline was asked, the read ran without", i)
			require.False(t, got.After(asked), "step %d: asked %v, the read ran under the later %v", i, asked, got)
			require.False(t, got.Before(asked.Add(-asked.Sub(askedAt)/8)), "step %d: asked %v at %v, the read ran under %v", i, asked, askedAt, got)
		}
	}
}

// The idle limit asked again before every request, and the read limit asked after it but
// never needed (the request was read whole with its first bytes), cost no timer update: one
// deadline is put on the socket for a hundred requests.
func TestRepeatedLimitsAreNotPutOnTheSocket(t *testing.T) {
	t.Parallel()
	rec := &recordingConn{}
	c := &Conn{Conn: rec, born: time.Now()}
	for range 100 {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute))) // idle
		_, err := c.Read(make([]byte, 1))                                  // the request
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second))) // read limit
	}
	require.Equal(t, 1, rec.sets)
}

// A deadline asked while a read waits applies to that read at once (a shorter one cuts it).
func TestDeadlineReachesAReadInProgress(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	for c.read.busy.Load() == 0 { // the read has started
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	select {
	case err := <-done:
		require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "err: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the read in progress was not cut")
	}
}

// A shorter deadline asked after a longer one was put on the socket cuts a silent peer.
func TestShorterDeadlineCutsASilentPeer(t *testing.T) {
	t.Parallel()
	c, peer := pipeConn(t)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Hour)))
	go func() { _, _ = peer.Write([]byte{1}) }()
	_, err := c.Read(make([]byte, 1)) // puts the hour on the socket
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	require.True(t, errors.Is(readErr(t, c), os.ErrDeadlineExceeded))
}
