package server

import (
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// A request whose app was deleted while it ran (the store refuses its write) answers as the
// next request for that app would: app_not_found 404, not internal_error.
func TestStoreErrorAnswersAppNotFoundForADeletedApp(t *testing.T) {
	t.Parallel()
	e := storeError(apierr.Internal(fmt.Errorf("fakeauth: private identity: %w", store.ErrAppDeleted)))
	require.Equal(t, http.StatusNotFound, e.Code.Status)
	require.Equal(t, apierr.AppNotFound.Name, e.Code.Name)
}

// A damaged data file stays internal_error 500 with a message that says so; a full disk keeps
// its own message, and any other cause the default one.
func TestStoreErrorNamesADamagedDataFile(t *testing.T) {
	t.Parallel()
	e := storeError(apierr.Internal(fmt.Errorf("directory: record: %w", store.ErrDamaged)))
	require.Equal(t, apierr.InternalError.Name, e.Code.Name)
	require.Equal(t, apierr.MsgStorageDamaged, e.Message)

	full := fmt.Errorf("%w: %w", store.ErrDamaged, &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC})
	require.Equal(t, apierr.MsgStorageFull, storeError(apierr.Internal(full)).Message)
	require.Equal(t, apierr.InternalError.Message, storeError(apierr.Internal(fmt.Errorf("boom"))).Message)
	notFound := apierr.UnknownUser.New()
	require.Same(t, notFound, storeError(notFound))
}
