package store

import (
	"errors"
	"os"
	"testing"
)

// A data file deleted (or replaced) under a running server refuses writes and fails Ping
// (readiness), instead of answering them as stored while they go to a file no later start opens.
func TestDataFileDeletedWhileOpen(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t, newKey(t))
	app := testApp(1)
	if err := s.CreateApp(app); err != nil {
		t.Fatal(err)
	}
	write := func(email string) error {
		_, err := s.UpdateRecord(app.ID, email, func(r *Record, exists bool) (bool, error) {
			r.UserID = "uid-" + email
			return true, nil
		})
		return err
	}
	if err := write("a@x.io"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(); err != nil {
		t.Fatalf("ping before the deletion: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := write("b@x.io"); !errors.Is(err, ErrDataFileGone) {
		t.Fatalf("record write after the data file was deleted: err = %v, want ErrDataFileGone", err)
	}
	if err := s.CreateApp(testApp(2)); !errors.Is(err, ErrDataFileGone) {
		t.Fatalf("app create after the data file was deleted: err = %v, want ErrDataFileGone", err)
	}
	if err := s.Ping(); !errors.Is(err, ErrDataFileGone) {
		t.Fatalf("ping after the data file was deleted: err = %v, want ErrDataFileGone", err)
	}
	// Reads still answer from the open file.
	if r, err := s.Record(app.ID, "a@x.io"); err != nil || r.UserID != "uid-a@x.io" {
		t.Fatalf("read after the deletion: %+v, %v", r, err)
	}
}
