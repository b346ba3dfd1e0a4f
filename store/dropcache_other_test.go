//go:build !linux

package store

import "testing"

// dropCache leaves the page cache alone where there is no posix_fadvise.
func dropCache(testing.TB, string) {}
