//go:build !linux

package store

// cacheByPage keeps the data file in the page cache page by page on Linux (pagecache_linux.go);
// elsewhere the cache is left to the system.
func cacheByPage(string) {}

// cachesByPage says that cacheByPage does nothing here.
const cachesByPage = false
