package encryption

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPaddedFromClearSize(t *testing.T) {
	t.Parallel()
	// Payload sizes exclude the 0x80 marker, as in the SDK test tables.
	tests := []struct {
		name    string
		padding Padding
		clear   uint64
		payload uint64
	}{
		{"auto 0", PaddingAuto, 0, 10},
		{"auto 1", PaddingAuto, 1, 10},
		{"auto 8", PaddingAuto, 8, 10},
		{"auto 9", PaddingAuto, 9, 10},
		{"auto 10", PaddingAuto, 10, 10},
		{"auto 11", PaddingAuto, 11, 12},
		{"auto 42", PaddingAuto, 42, 44},
		{"auto 250", PaddingAuto, 250, 256},
		{"step 5 of 0", PaddingStep(5), 0, 5},
		{"step 5 of 2", PaddingStep(5), 2, 5},
		{"step 5 of 4", PaddingStep(5), 4, 5},
		{"step 5 of 5", PaddingStep(5), 5, 5},
		{"step 5 of 9", PaddingStep(5), 9, 10},
		{"step 5 of 10", PaddingStep(5), 10, 10},
		{"step 5 of 14", PaddingStep(5), 14, 15},
		{"step 5 of 40", PaddingStep(5), 40, 40},
		{"step 5 of 42", PaddingStep(5), 42, 45},
		{"step 5 of 45", PaddingStep(5), 45, 45},
		{"off 0", PaddingOff, 0, 1},
		{"off 19", PaddingOff, 19, 19},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.payload+1, PaddedFromClearSize(tc.clear, tc.padding))
		})
	}
}

func TestUnpad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want []byte
		err  error
	}{
		{"marker only", []byte{0x80}, []byte{}, nil},
		{"marker and zeros", []byte{'a', 0x80, 0, 0}, []byte{'a'}, nil},
		{"data ending in zero", []byte{0, 0x80}, []byte{0}, nil},
		{"empty", []byte{}, nil, ErrBadPadding},
		{"all zeros", []byte{0, 0, 0}, nil, ErrBadPadding},
		{"no marker", []byte{'a', 'b'}, nil, ErrBadPadding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := unpad(tc.in)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
