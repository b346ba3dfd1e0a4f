package verification_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

// An app deleted while one of its sends is in flight (code stored, mail being sent): the failed
// mail finds nothing to withdraw, since the deletion took the code and the counts with it, and
// no store error is logged for it; the app's requests then answer app_not_found.
func TestAppDeletedDuringASend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	e.SMTP.SetFault(mailtest.Fault{At: mailtest.AtConnect, Code: 421})
	e.Mail.mu.Lock()
	e.Mail.before = func() { require.NoError(t, e.Apps.Delete(a.App.ID)) }
	e.Mail.mu.Unlock()
	require.Equal(t, "send_email_error", e.send(t, a, emailData("out@x.io")).ErrorCode(t))
	require.NotContains(t, e.LogBuf.String(), "withdraw unsent code")
	require.Equal(t, "app_not_found", e.code(t, a, "out@x.io").ErrorCode(t))
}
