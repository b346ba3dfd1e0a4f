package server

import (
	"errors"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// storeError answers the store's errors as the API says, for an internal_error whose cause holds
// one: the store refusing a write because the request's app was deleted while the request ran
// (store.ErrAppDeleted) is app_not_found, as the next request for that app would be; a damaged
// data file (store.ErrDamaged) keeps internal_error with a message that says so, for the
// operator reading a client's report. Any other error is returned as it is.
func storeError(e *apierr.Error) *apierr.Error {
	if e == nil || e.Code != apierr.InternalError || e.Cause == nil {
		return e
	}
	switch {
	case errors.Is(e.Cause, store.ErrAppDeleted):
		return apierr.AppNotFound.Wrap(e.Cause)
	case errors.Is(e.Cause, store.ErrDamaged) && e.Message == apierr.InternalError.Message:
		return &apierr.Error{Code: apierr.InternalError, Message: apierr.MsgStorageDamaged, Cause: e.Cause}
	}
	return e
}
