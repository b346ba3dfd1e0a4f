package encryption

import (
	"fmt"
	"math/bits"
)

// Padding selects how padded formats (6, 7, 8, 10, 11) round the clear size
// up. The zero value is PaddingAuto (PADME, the SDK default); PaddingOff is
// step 1, as in the SDKs; any other value k pads to a multiple of k.
// Unpadded formats ignore it.
type Padding uint32

const (
	// PaddingAuto pads with PADME to at least 10 bytes.
	PaddingAuto Padding = 0
	// PaddingOff adds only the mandatory marker (step 1).
	PaddingOff Padding = 1
)

// PaddingStep returns the padding that rounds clear sizes up to a multiple
// of k (k = 1 is PaddingOff; k = 0 is PaddingAuto).
func PaddingStep(k uint32) Padding { return Padding(k) }

// String describes the padding ("auto", "off" or "step N").
func (p Padding) String() string {
	switch p {
	case PaddingAuto:
		return "auto"
	case PaddingOff:
		return "off"
	default:
		return fmt.Sprintf("step %d", uint32(p))
	}
}

// padme returns the PADME size of n (exit/FORMATS.md).
func padme(n uint64) uint64 {
	if n <= 1 {
		return 0
	}
	e := uint64(bits.Len64(n) - 1)
	s := uint64(bits.Len64(e))
	mask := uint64(1)<<(e-s) - 1
	return (n + mask) &^ mask
}

// PaddedFromClearSize returns the padded size of n clear bytes, including
// the mandatory 0x80 marker (exit/FORMATS.md).
func PaddedFromClearSize(n uint64, p Padding) uint64 {
	if p == PaddingAuto {
		return max(padme(n), 10) + 1
	}
	k := uint64(p)
	if n == 0 {
		return k + 1
	}
	return (n+k-1)/k*k + 1
}

// appendPadded appends data || 0x80 || zeros up to PaddedFromClearSize.
func appendPadded(dst, data []byte, p Padding) []byte {
	total := int(PaddedFromClearSize(uint64(len(data)), p))
	dst = append(dst, data...)
	dst = append(dst, 0x80)
	for range total - len(data) - 1 {
		dst = append(dst, 0)
	}
	return dst
}

// unpad strips trailing zeros and the 0x80 marker (ISO/IEC 7816-4). It
// returns ErrBadPadding when the marker is missing.
func unpad(b []byte) ([]byte, error) {
	i := len(b) - 1
	for i >= 0 && b[i] == 0 {
		i--
	}
	if i < 0 || b[i] != 0x80 {
		return nil, fmt.Errorf("unable to remove padding: %w", ErrBadPadding)
	}
	return b[:i], nil
}
