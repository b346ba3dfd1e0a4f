package idserver

import (
	"fmt"
	"testing"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// The served app deleted while a request ran (the store refuses its write): the client gets
// the answer of a request made after the deletion, not internal_error.
func TestDirErrorOfADeletedApp(t *testing.T) {
	err := dirError("identity", fmt.Errorf("directory: permanent: %w", store.ErrAppDeleted))
	if e := apierr.As(err); e == nil || e.Code != apierr.ISAppUnavailable {
		t.Errorf("error %v, want identity_server_app_unavailable", err)
	}
}
