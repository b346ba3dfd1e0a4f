package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"syscall"
)

// checkPages walks the page tree of the bbolt file at path (pageSize as bbolt read it from the
// meta pages) and returns an ErrDamaged naming the first page that bbolt could not read
// safely: a page number past the end, a page whose header names another page, a page reached
// twice (a loop), an unknown page type, an element or a key or value outside its page, keys out
// of order, a bucket value too short, a tree deeper than maxTreeDepth, a freelist page out of
// bounds. It maps the file read-only and trusts nothing it reads: every access is a bounds-checked
// slice of the mapping (a file truncated meanwhile is a fault, which guard turns into an error).
//
// It runs before bbolt walks the tree in goroutines of its own, where a panic or a fault cannot
// be caught (the freelist rebuild when the file opens for writing, Tx.Check): a file that passes
// holds no page those walks would trip on. Its cost is one read of every page in use, as that
// rebuild's walk itself.
func checkPages(path string, pageSize int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: check %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: check %s: %w", path, err)
	}
	if st.Size() < int64(2*pageSize) || int64(int(st.Size())) != st.Size() {
		return damaged(path, fmt.Sprintf("%d bytes", st.Size()))
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("store: check %s: map: %w", path, err)
	}
	defer syscall.Munmap(data)
	return guard(path, func() error {
		w := &pageWalker{data: data, ps: pageSize}
		if err := w.walk(); err != nil {
			return damaged(path, err)
		}
		return nil
	})
}

// maxTreeDepth bounds the depth of a B+tree (pages to a leaf, buckets nested): bbolt's trees
// are a few levels deep, and the bound keeps the walk's recursion small whatever the pages say.
const maxTreeDepth = 64

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common), in the machine's byte order.
const (
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	elementSize     = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHeadSize  = 16 // root pgid u64, sequence u64
	flagBranch      = 0x01
	flagLeaf        = 0x02
	flagFreelist    = 0x10
	leafFlagBucket  = 0x01
	metaMagic       = 0xED0CDAED
	metaVersion     = 2
	metaSumOffset   = 56 // bytes of the meta the checksum covers
	pgidNoFreelist  = ^uint64(0)
	freelistOverrun = 0xFFFF // count field meaning "the count is the first id"
)

var ne = binary.NativeEndian

type pageWalker struct {
	data []byte // the file, mapped
	ps   int
	hwm  uint64   // pages in use (the meta's pgid)
	seen []uint64 // bit set of the pages reached
}

// walk picks the meta page bbolt uses, then checks the freelist page and the whole tree.
func (w *pageWalker) walk() error {
	if w.ps < 1024 || w.ps > 1<<20 {
		return fmt.Errorf("page size %d", w.ps)
	}
	root, freelist, hwm, err := w.meta()
	if err != nil {
		return err
	}
	if hwm < 2 || hwm > uint64(len(w.data)/w.ps) {
		return fmt.Errorf("the meta page counts %d pages, the file holds %d", hwm, len(w.data)/w.ps)
	}
	w.hwm = hwm
	w.seen = make([]uint64, (hwm+63)/64)
	if freelist != pgidNoFreelist {
		if err := w.freelist(freelist); err != nil {
			return err
		}
	}
	return w.bucket(root, nil, 0)
}

// meta returns the root page, freelist page and page count of the meta page bbolt uses: the
// valid one of the two with the higher transaction ID (bbolt's DB.meta).
func (w *pageWalker) meta() (root, freelist, hwm uint64, err error) {
	type meta struct{ root, freelist, pgid, txid uint64 }
	var metas []meta
	for i := range 2 {
		if len(w.data) < i*w.ps+pageHeaderSize+64 {
			continue
		}
		m := w.data[i*w.ps+pageHeaderSize:]
		h := fnv.New64a()
		h.Write(m[:metaSumOffset])
		if ne.Uint32(m[0:]) != metaMagic || ne.Uint32(m[4:]) != metaVersion || ne.Uint64(m[metaSumOffset:]) != h.Sum64() {
			continue
		}
		metas = append(metas, meta{root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), pgid: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])})
	}
	if len(metas) == 0 {
		return 0, 0, 0, fmt.Errorf("no valid meta page")
	}
	m := metas[0]
	if len(metas) == 2 && metas[1].txid > m.txid {
		m = metas[1]
	}
	return m.root, m.freelist, m.pgid, nil
}

// page returns page id with its overflow pages and marks them reached. Its type is one of branch,
// leaf or freelist; the caller checks which.
func (w *pageWalker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page %d: out of bounds (%d pages)", id, w.hwm)
	}
	head := w.data[id*uint64(w.ps):]
	if got := ne.Uint64(head); got != id {
		return nil, fmt.Errorf("page %d: its header says page %d", id, got)
	}
	flags, overflow := ne.Uint16(head[8:]), uint64(ne.Uint32(head[12:]))
	if flags != flagBranch && flags != flagLeaf && flags != flagFreelist {
		return nil, fmt.Errorf("page %d: unexpected type %#x", id, flags)
	}
	if overflow >= w.hwm-id {
		return nil, fmt.Errorf("page %d: %d overflow pages past the end (%d pages)", id, overflow, w.hwm)
	}
	for p := id; p <= id+overflow; p++ {
		if w.seen[p/64]&(1<<(p%64)) != 0 {
			return nil, fmt.Errorf("page %d: reached twice", p)
		}
		w.seen[p/64] |= 1 << (p % 64)
	}
	return w.data[id*uint64(w.ps) : (id+overflow+1)*uint64(w.ps)], nil
}

// freelist checks a freelist page: in bounds, its IDs inside it, sorted and in bounds.
func (w *pageWalker) freelist(id uint64) error {
	p, err := w.page(id)
	if err != nil {
		return err
	}
	if ne.Uint16(p[8:]) != flagFreelist {
		return fmt.Errorf("page %d: not a freelist page", id)
	}
	start, count := uint64(pageHeaderSize), uint64(ne.Uint16(p[10:]))
	if count == freelistOverrun {
		count, start = ne.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if count > (uint64(len(p))-start)/8 {
		return fmt.Errorf("freelist page %d: %d IDs do not fit", id, count)
	}
	var last uint64
	for i := range count {
		pid := ne.Uint64(p[start+8*i:])
		if pid < 2 || pid >= w.hwm || pid <= last {
			return fmt.Errorf("freelist page %d: free page %d out of order or bounds", id, pid)
		}
		last = pid
	}
	return nil
}

// bucket checks the tree of the bucket whose root page is root, or whose inline page is
// inline when root is 0.
func (w *pageWalker) bucket(root uint64, inline []byte, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: buckets nested deeper than %d", root, maxTreeDepth)
	}
	if root == 0 {
		if len(inline) < pageHeaderSize || ne.Uint16(inline[8:]) != flagLeaf {
			return fmt.Errorf("inline bucket: not a leaf page")
		}
		_, err := w.leaf(0, inline, nil, nil, depth, false)
		return err
	}
	_, err := w.node(root, nil, nil, depth, 0)
	return err
}

// node checks the subtree at page id, whose keys must lie in [lo, hi) (nil: unbounded), as
// bbolt's Tx.Check orders them, and returns its last key.
func (w *pageWalker) node(id uint64, lo, hi []byte, bucketDepth, depth int) ([]byte, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("page %d: tree deeper than %d", id, maxTreeDepth)
	}
	p, err := w.page(id)
	if err != nil {
		return nil, err
	}
	if ne.Uint16(p[8:]) == flagLeaf {
		return w.leaf(id, p, lo, hi, bucketDepth, true)
	}
	if ne.Uint16(p[8:]) != flagBranch {
		return nil, fmt.Errorf("page %d: unexpected type %#x", id, ne.Uint16(p[8:]))
	}
	n := int(ne.Uint16(p[10:]))
	if n == 0 || pageHeaderSize+n*elementSize > len(p) {
		return nil, fmt.Errorf("branch page %d: %d elements", id, n)
	}
	type child struct {
		id  uint64
		key []byte
	}
	children := make([]child, n)
	for i := range children {
		e := pageHeaderSize + i*elementSize
		key, err := span(p, e, ne.Uint32(p[e:]), ne.Uint32(p[e+4:]), 0)
		if err != nil {
			return nil, fmt.Errorf("branch page %d element %d: %w", id, i, err)
		}
		children[i] = child{id: ne.Uint64(p[e+8:]), key: key}
	}
	min, last := lo, []byte(nil)
	for i, c := range children {
		if err := keyInRange(c.key, i, min, hi); err != nil {
			return nil, fmt.Errorf("branch page %d element %d: %w", id, i, err)
		}
		next := hi
		if i+1 < n {
			next = children[i+1].key
		}
		if last, err = w.node(c.id, c.key, next, bucketDepth, depth+1); err != nil {
			return nil, err
		}
		min = last
	}
	return last, nil
}

// leaf checks a leaf page's elements (keys in order within [lo, hi)) and the buckets it holds;
// nested says whether it may hold buckets (an inline bucket's page may not).
func (w *pageWalker) leaf(id uint64, p, lo, hi []byte, bucketDepth int, nested bool) ([]byte, error) {
	n := int(ne.Uint16(p[10:]))
	if pageHeaderSize+n*elementSize > len(p) {
		return nil, fmt.Errorf("leaf page %d: %d elements do not fit", id, n)
	}
	min, last := lo, []byte(nil)
	for i := range n {
		e := pageHeaderSize + i*elementSize
		flags := ne.Uint32(p[e:])
		key, err := span(p, e, ne.Uint32(p[e+4:]), ne.Uint32(p[e+8:]), ne.Uint32(p[e+12:]))
		if err != nil {
			return nil, fmt.Errorf("leaf page %d element %d: %w", id, i, err)
		}
		if err := keyInRange(key, i, min, hi); err != nil {
			return nil, fmt.Errorf("leaf page %d element %d: %w", id, i, err)
		}
		min, last = key, key
		switch {
		case flags == 0:
		case flags == leafFlagBucket && nested:
			off := e + int(ne.Uint32(p[e+4:])) + len(key)
			v := p[off : off+int(ne.Uint32(p[e+12:]))]
			if len(v) < bucketHeadSize {
				return nil, fmt.Errorf("leaf page %d element %d: bucket value of %d bytes", id, i, len(v))
			}
			if err := w.bucket(ne.Uint64(v), v[bucketHeadSize:], bucketDepth+1); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("leaf page %d element %d: flags %#x", id, i, flags)
		}
	}
	return last, nil
}

// span returns the key of the element at offset e of p (pos and sizes as the element says),
// checking that key and value (vsize) lie inside p and that the key is not empty.
func span(p []byte, e int, pos, ksize, vsize uint32) ([]byte, error) {
	start := uint64(e) + uint64(pos)
	end := start + uint64(ksize)
	if ksize == 0 || end+uint64(vsize) > uint64(len(p)) {
		return nil, fmt.Errorf("key or value outside the page")
	}
	return p[start:end], nil
}

// keyInRange is bbolt's key order: the first key of a page not below the least key its parent
// allows (lo), each next key above the one before (lo is then the previous key), all below hi.
func keyInRange(key []byte, i int, lo, hi []byte) error {
	if lo != nil && (i == 0 && bytes.Compare(lo, key) > 0 || i > 0 && bytes.Compare(lo, key) >= 0) {
		return fmt.Errorf("keys out of order")
	}
	if hi != nil && bytes.Compare(key, hi) >= 0 {
		return fmt.Errorf("key above its parent's range")
	}
	return nil
}
