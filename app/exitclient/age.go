package exitclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
)

// AgeSuffix ends the name of a file DecryptTree writes as an age file (DecryptOptions.Seal).
const AgeSuffix = ".age"

// AgeRecipients parses the recipients given one by one (--age-recipient) and those of a
// recipients file (--age-recipients-file: one per line, blank lines and # comments skipped,
// as `age -R` reads it). Recipients are X25519 (age1...) or, with age 1.3, post-quantum
// hybrid (age1pq1...) public keys.
func AgeRecipients(recipients []string, file string) ([]age.Recipient, error) {
	var out []age.Recipient
	if len(recipients) > 0 {
		rs, err := age.ParseRecipients(strings.NewReader(strings.Join(recipients, "\n")))
		if err != nil {
			return nil, fmt.Errorf("--age-recipient: %w", err)
		}
		out = append(out, rs...)
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--age-recipients-file: %w", err)
		}
		defer f.Close()
		rs, err := age.ParseRecipients(f)
		if err != nil {
			return nil, fmt.Errorf("--age-recipients-file %s: %w", file, err)
		}
		out = append(out, rs...)
	}
	if len(out) == 0 {
		return nil, errors.New("no age recipient")
	}
	return out, nil
}

// AgeWriter returns a DecryptOptions.Seal that writes an age file (binary, not armored) to
// the recipients: the clear bytes pass through memory only, 64 KiB at a time.
func AgeWriter(recipients []age.Recipient) func(io.Writer) (io.WriteCloser, error) {
	return func(w io.Writer) (io.WriteCloser, error) { return age.Encrypt(w, recipients...) }
}

// AgeSeal returns a RecordOptions.Seal that turns a clear value into a binary age file to the
// recipients.
func AgeSeal(recipients []age.Recipient) func([]byte) ([]byte, error) {
	return func(clear []byte) ([]byte, error) {
		var buf bytes.Buffer
		w, err := age.Encrypt(&buf, recipients...)
		if err != nil {
			return nil, fmt.Errorf("age: %w", err)
		}
		if _, err := w.Write(clear); err != nil {
			return nil, fmt.Errorf("age: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("age: %w", err)
		}
		return buf.Bytes(), nil
	}
}
