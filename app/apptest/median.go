package apptest

import "slices"

// Median is the middle of xs (the mean of the two middle values of an even count), 0 for none.
// Benchmarks report it over repeated rounds, so one slow round does not move the figure.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
