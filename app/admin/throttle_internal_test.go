package admin

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/fakeclock"
)

func addr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

func wrongToken() bool { return true }

// However many addresses guess, the table holds at most its capacity; past it, the addresses
// it cannot hold share one count, so they cannot guess without limit either.
func TestThrottleTableStaysBounded(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New()
	const capacity, maxWrong = 100, 3
	th := newThrottle(maxWrong, 10*time.Minute, 15*time.Minute, capacity, clock.Now)
	for i := range capacity {
		require.True(t, th.check(addr(i), wrongToken).counted)
	}
	require.Equal(t, capacity, th.size())

	// Table full of live entries: new addresses share the overflow count, then its lock.
	for i := range maxWrong {
		v := th.check(addr(capacity+i), wrongToken)
		require.True(t, v.shared)
		require.Zero(t, v.retryAfter)
		require.Equal(t, i == maxWrong-1, v.lockedNow)
	}
	v := th.check(addr(5*capacity), wrongToken)
	require.True(t, v.shared)
	require.Equal(t, 15*time.Minute, v.retryAfter, "an untracked address is locked with the overflow")
	v = th.check(addr(1), wrongToken)
	require.False(t, v.shared, "tracked addresses keep their own count")
	require.Zero(t, v.retryAfter)
	require.Equal(t, capacity, th.size())

	// Once the entries' windows are over, a sweep frees the table for new addresses.
	clock.Add(10 * time.Minute)
	v = th.check(addr(6*capacity), wrongToken)
	require.False(t, v.shared)
	require.Zero(t, v.retryAfter)
	require.Equal(t, 1, th.size(), "every expired entry swept; only the new address is held")
}

// A flood from many addresses: the table never passes MaxTrackedClients, and its memory stays
// within the documented bound (2 MB).
func TestThrottleMemoryBoundUnderManyAddresses(t *testing.T) {
	clock := fakeclock.New()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	th := newThrottle(10, 10*time.Minute, 15*time.Minute, MaxTrackedClients, clock.Now)
	for i := range 5 * MaxTrackedClients {
		th.check(addr(i), wrongToken)
		if i%1000 == 0 {
			clock.Add(time.Millisecond)
		}
	}
	require.Equal(t, MaxTrackedClients, th.size())
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("table of %d addresses: %d bytes (%d per address)", th.size(), grown, grown/int64(th.size()))
	require.Less(t, grown, int64(2<<20))
	runtime.KeepAlive(th)
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a, b string }{
		{"192.0.2.1", "::ffff:192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
	} {
		require.Equal(t, clientKey(netip.MustParseAddr(c.a)), clientKey(netip.MustParseAddr(c.b)), c)
	}
	require.NotEqual(t, clientKey(netip.MustParseAddr("192.0.2.1")), clientKey(netip.MustParseAddr("192.0.2.2")))
	require.NotEqual(t, clientKey(netip.MustParseAddr("2001:db8:1:2::1")), clientKey(netip.MustParseAddr("2001:db8:1:3::1")))
}
