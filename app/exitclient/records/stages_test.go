package records_test

import (
	"strings"
	"testing"

	"github.com/idvault/idvault/app/apptest/funcsize"
)

// Decrypt reads as a pipeline of named stages (pipeline.go: read, hand, send, write; a batch's
// add and send in batch.go), none over 60 lines.
func TestDecryptStagesAreShort(t *testing.T) {
	t.Parallel()
	stages := funcsize.Pick(funcsize.Of(t, "."), func(f funcsize.Func) bool {
		return f.Name == "Decrypt" || strings.HasPrefix(f.Name, "(*pipeline).") || strings.HasPrefix(f.Name, "(*recBatch).")
	})
	if len(stages) < 8 {
		t.Fatalf("found %d of Decrypt's functions: the names in this test no longer match pipeline.go", len(stages))
	}
	for _, f := range funcsize.Over(stages, 60) {
		t.Errorf("%v (at most 60): cut it into named stages", f)
	}
}
