package funcsize_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/funcsize"
)

// Of finds declared functions, methods and literals with their lines and signatures, and skips
// test files; Pick and Over keep the long ones a test chooses.
func TestOfMeasuresEveryFunction(t *testing.T) {
	t.Parallel()
	fs := funcsize.Of(t, "testdata/pkg")
	var got []string
	for _, f := range fs {
		got = append(got, f.String()+" "+f.Signature())
	}
	require.Equal(t, []string{
		"pkg.go:7: (*cmd).setup is 6 lines func() func(ctx context.Context, args []string) int",
		"pkg.go:8: (*cmd).setup.func is 4 lines func(context.Context, []string) int",
		"pkg.go:14: short is 1 lines func(int, int) (int, error)",
	}, got)
	long := funcsize.Over(funcsize.Pick(fs, func(f funcsize.Func) bool { return f.Literal }), 3)
	require.Len(t, long, 1)
	require.Equal(t, "(*cmd).setup.func", long[0].Name)
	require.Empty(t, funcsize.Over(fs, 6))
}
