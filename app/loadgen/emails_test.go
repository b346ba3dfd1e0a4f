package loadgen_test

import "testing"

// The creation rows' new emails are unique within a run and across runs, and arrive in no order
// of keys: numbered in order, they would all land in the store's last leaves, which real
// addresses do not.
func TestNewEmailsAreUniqueAndScattered(t *testing.T) {
	const n = 100_000
	seen := make(map[string]bool, 2*n)
	increasing := 0
	prev := ""
	for _, run := range []int64{1764186000000000000, 1764186000000000001} {
		for i := range int64(n) {
			e := newEmail("n", run, i)
			if seen[e] {
				t.Fatalf("email %q made twice", e)
			}
			seen[e] = true
			if e > prev {
				increasing++
			}
			prev = e
		}
	}
	// In order, every email but the first would follow the one before; scattered, about half.
	if frac := float64(increasing) / (2 * n); frac < 0.4 || frac > 0.6 {
		t.Errorf("%.2f of the emails sort after the one before: not scattered", frac)
	}
}
