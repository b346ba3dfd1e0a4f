package outfiles

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"filippo.io/age"
	"filippo.io/age/agessh"
)

// AgeSuffix ends the name of a file exit decrypt writes as an age file (tree.Options.Seal).
const AgeSuffix = ".age"

// AgeRecipients parses the recipients given one by one (--age-recipient) and those of a
// recipients file (--age-recipients-file: one per line, blank lines and # comments skipped,
// as `age -R` reads it). A recipient is an X25519 public key (age1...), age 1.3's post-quantum
// hybrid recipient (age1pq1...), or an SSH public key (ssh-ed25519, ssh-rsa) as in
// ~/.ssh/id_ed25519.pub or an authorized_keys file: what the age command takes with -r or -R,
// but for plugin recipients (age1yubikey1..., which would run a plugin program) and tag
// recipients (age1tag1..., meant for plugin identities), which are refused. An error names the flag or the file and the line,
// never the value: a private key pasted in the wrong place is not printed.
func AgeRecipients(recipients []string, file string) ([]age.Recipient, error) {
	var out []age.Recipient
	for i, r := range recipients {
		rec, err := parseAgeRecipient(strings.TrimSpace(r))
		if err != nil {
			return nil, fmt.Errorf("--age-recipient (#%d): %w", i+1, err)
		}
		out = append(out, rec)
	}
	if file != "" {
		rs, err := ageRecipientsFile(file)
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

// Bounds of a recipients file, as the age command's: 16 MiB in all, 8 KiB a line (an SSH RSA
// key of 16384 bits is under 3 KiB).
const (
	ageRecipientsFileMax = 16 << 20
	ageRecipientLineMax  = 8 << 10
)

// ageRecipientsFile reads a recipients file: one recipient per line; blank lines, lines of
// spaces and # comments skipped.
func ageRecipientsFile(name string) ([]age.Recipient, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: ageRecipientsFileMax + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), ageRecipientLineMax)
	var out []age.Recipient
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseAgeRecipient(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, r)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("a line is longer than %d bytes", ageRecipientLineMax)
	case err != nil:
		return nil, err
	case lr.N == 0:
		return nil, fmt.Errorf("longer than %d MiB", ageRecipientsFileMax>>20)
	case len(out) == 0:
		return nil, errors.New("no recipient in the file")
	}
	return out, nil
}

// parseAgeRecipient reads one recipient. Its errors never quote s.
func parseAgeRecipient(s string) (age.Recipient, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid UTF-8")
	}
	lower := strings.ToLower(s)
	var (
		r   age.Recipient
		err error
	)
	switch {
	case strings.HasPrefix(lower, "age-secret-key-"), strings.HasPrefix(lower, "age-plugin-"),
		strings.Contains(s, "PRIVATE KEY"):
		return nil, errors.New("a private key, not a recipient: give its public key (age-keygen -y, or the .pub file)")
	case strings.HasPrefix(s, "age1tag1"), strings.HasPrefix(s, "age1tagpq1"):
		return nil, errors.New("a tag recipient (age1tag1...): not supported; give an age1..., age1pq1... or SSH public key")
	case strings.HasPrefix(s, "age1pq1"):
		r, err = age.ParseHybridRecipient(s)
	case strings.HasPrefix(s, "age1") && strings.Count(s, "1") > 1: // bech32 data has no "1": age1<plugin>1...
		return nil, errors.New("a plugin recipient (age1<plugin>1...): plugins are not supported; give an age1..., age1pq1... or SSH public key")
	case strings.HasPrefix(s, "age1"):
		r, err = age.ParseX25519Recipient(s)
	case strings.HasPrefix(s, "ssh-"):
		r, err = agessh.ParseRecipient(s)
	default:
		return nil, errors.New("not an age recipient (age1..., age1pq1...) or SSH public key (ssh-ed25519, ssh-rsa)")
	}
	if err != nil {
		return nil, errors.New("a malformed or unsupported recipient (" + recipientKind(s) + ")")
	}
	return r, nil
}

// recipientKind names a recipient's type for an error, from its prefix only.
func recipientKind(s string) string {
	for _, k := range []string{"age1pq1", "ssh-ed25519", "ssh-rsa", "age1"} {
		if strings.HasPrefix(s, k) {
			return k
		}
	}
	if i := strings.IndexAny(s, " \t"); strings.HasPrefix(s, "ssh-") && i > 0 && i <= 32 {
		return s[:i]
	}
	return "unknown type"
}

// AgeWriter returns a tree.Options.Seal that writes an age file (binary, not armored) to
// the recipients: the clear bytes pass through memory only, 64 KiB at a time.
func AgeWriter(recipients []age.Recipient) func(io.Writer) (io.WriteCloser, error) {
	return func(w io.Writer) (io.WriteCloser, error) { return age.Encrypt(w, recipients...) }
}

// AgeSeal returns a records.Options.Seal that turns a clear value into a binary age file to the
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
