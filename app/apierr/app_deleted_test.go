package apierr

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/idvault/idvault/store"
)

// A request whose app was deleted while it ran (the store refuses its write) answers as the
// next request for that app would: app_not_found 404, not internal_error.
func TestInternalAnswersAppNotFoundForADeletedApp(t *testing.T) {
	e := Internal(fmt.Errorf("fakeauth: private identity: %w", store.ErrAppDeleted))
	if e.Code.Status != http.StatusNotFound || e.Code.Name != AppNotFound.Name {
		t.Errorf("code %d %s, want app_not_found 404", e.Code.Status, e.Code.Name)
	}
}
