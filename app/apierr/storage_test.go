package apierr

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A write refused by the server's storage tells the client (and the operator reading its report)
// why, instead of "a retry may help": still internal_error 500, the cause only in the log.
func TestInternalNamesRefusingStorage(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		want  string
	}{
		{syscall.ENOSPC, MsgStorageFull},
		{syscall.EDQUOT, MsgStorageFull},
		{syscall.EROFS, MsgStorageReadOnly},
	} {
		cause := fmt.Errorf("fakeauth: private identity: %w", &os.PathError{Op: "write", Path: "/var/lib/idvault/idvault.db", Err: tc.errno})
		e := Internal(cause)
		if e.Code.Status != http.StatusInternalServerError || e.Code.Name != InternalError.Name {
			t.Errorf("%v: code %d %s, want internal_error 500", tc.errno, e.Code.Status, e.Code.Name)
		}
		if e.Message != tc.want {
			t.Errorf("%v: message %q, want %q", tc.errno, e.Message, tc.want)
		}
		if strings.Contains(e.Message, "/var/lib") {
			t.Errorf("%v: message %q names a server path", tc.errno, e.Message)
		}
	}
	if e := Internal(fmt.Errorf("boom")); e.Message != InternalError.Message {
		t.Errorf("another cause: message %q, want the default %q", e.Message, InternalError.Message)
	}
}
