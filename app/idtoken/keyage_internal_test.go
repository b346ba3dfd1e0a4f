package idtoken

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyAge reads Cache-Control as caches do (directives in any case, in one header or several,
// max-age quoted or not) and never leaves [minAge, maxAge], whatever the header says.
func TestKeyAge(t *testing.T) {
	t.Parallel()
	const lo, hi = time.Minute, 15 * time.Minute
	for name, c := range map[string]struct {
		header http.Header
		want   time.Duration
	}{
		"none":                    {http.Header{}, hi},
		"max-age":                 {http.Header{"Cache-Control": {"max-age=300"}}, 5 * time.Minute},
		"MAX-AGE, quoted":         {http.Header{"Cache-Control": {`public, MAX-AGE="300"`}}, 5 * time.Minute},
		"two headers":             {http.Header{"Cache-Control": {"public", "max-age=240"}}, 4 * time.Minute},
		"max-age=0":               {http.Header{"Cache-Control": {"max-age=0"}}, lo},
		"no-store":                {http.Header{"Cache-Control": {"No-Store"}}, lo},
		"negative":                {http.Header{"Cache-Control": {"max-age=-5"}}, hi},
		"garbage":                 {http.Header{"Cache-Control": {"max-age=soon"}}, hi},
		"huge":                    {http.Header{"Cache-Control": {"max-age=99999999999999999999"}}, hi},
		"beyond a Duration":       {http.Header{"Cache-Control": {"max-age=9223372036854775807"}}, hi},
		"Age past max-age":        {http.Header{"Cache-Control": {"max-age=300"}, "Age": {"900"}}, lo},
		"Age within max-age":      {http.Header{"Cache-Control": {"max-age=800"}, "Age": {"200"}}, 10 * time.Minute},
		"Age not a number":        {http.Header{"Cache-Control": {"max-age=300"}, "Age": {"x"}}, 5 * time.Minute},
		"s-maxage alone (shared)": {http.Header{"Cache-Control": {"s-maxage=120"}}, hi},
	} {
		require.Equal(t, c.want, keyAge(c.header, lo, hi), name)
	}
}

// Whatever the headers say, keyAge never panics and stays within its bounds. The table's
// headers are the seeds.
func FuzzKeyAge(f *testing.F) {
	for _, seed := range [][2]string{
		{"max-age=300", ""}, {`public, MAX-AGE="300"`, ""}, {"no-store", ""}, {"max-age=-5", ""},
		{"max-age=99999999999999999999", ""}, {"max-age=9223372036854775807", "1"}, {"max-age=300", "900"},
		{"max-age=800", "200"}, {"s-maxage=120", ""}, {",,=,max-age=,", "-1"},
	} {
		f.Add(seed[0], seed[1])
	}
	const lo, hi = time.Minute, 15 * time.Minute
	f.Fuzz(func(t *testing.T, cacheControl, age string) {
		got := keyAge(http.Header{"Cache-Control": {cacheControl}, "Age": {age}}, lo, hi)
		if got < lo || got > hi {
			t.Fatalf("keyAge(%q, Age %q) = %s, outside [%s, %s]", cacheControl, age, got, lo, hi)
		}
	})
}
