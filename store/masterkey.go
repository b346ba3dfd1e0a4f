package store

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/idvault/idvault/app/smallfile"
)

// MasterKeySize is the size of the master key in bytes.
const MasterKeySize = chacha20poly1305.KeySize

// MasterKey is the key that seals sensitive values at rest. It never leaves the process.
type MasterKey struct {
	key [MasterKeySize]byte
}

// maxKeyFile bounds the master key file (one line of base64; a few blank lines or a comment's
// worth of room).
const maxKeyFile = 4 << 10

// LoadOrCreateMasterKey reads the master key from path (base64 text, one line). When the file
// does not exist it creates it, mode 0600, with a fresh random key, and reports created=true,
// but only for a new data file: when dataFile exists, its secrets are sealed under the key it
// was created with, which a new key would never open, so the missing key is an error
// (ErrMasterKeyMissing) and nothing is written; unless dataFile is no data file at all (a
// directory, a file bbolt does not read), which the error then says instead. A key file readable by group or others is
// refused: it protects every secret idvault holds. The key file's directory must exist
// (CheckDirectory).
func LoadOrCreateMasterKey(path, dataFile string) (mk *MasterKey, created bool, err error) {
	raw, err := smallfile.Read(path, maxKeyFile)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(dataFile); serr == nil {
			if err := CheckDataFile(dataFile); err != nil {
				return nil, false, err
			}
			return nil, false, fmt.Errorf("%w: %s is missing, but the data file %s exists: restore the key file it was created with (store.key_file; idvault makes a new key only for a new data file)", ErrMasterKeyMissing, path, dataFile)
		}
		mk, err := createMasterKey(path)
		return mk, err == nil, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: master key: %w", err) // names the file: read FILE, open FILE
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, false, fmt.Errorf("store: master key %s is readable by group or others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != MasterKeySize {
		return nil, false, fmt.Errorf("store: master key %s: want %d bytes of base64", path, MasterKeySize)
	}
	mk = &MasterKey{}
	copy(mk.key[:], key)
	return mk, false, nil
}

func createMasterKey(path string) (*MasterKey, error) {
	mk := &MasterKey{}
	if _, err := rand.Read(mk.key[:]); err != nil {
		return nil, fmt.Errorf("store: generate master key: %w", err)
	}
	if err := CheckDirectory(path, "master key", "store.key_file"); err != nil {
		return nil, err
	}
	text := base64.StdEncoding.EncodeToString(mk.key[:]) + "\n"
	if err := WriteNewFile(path, []byte(text), 0o600); err != nil {
		return nil, fmt.Errorf("store: write master key %s: %w", path, err)
	}
	return mk, nil
}

// WriteNewFile creates path with perm, fails if it exists, and fsyncs it. A failed write (a full
// disk) removes the file it created: an empty or partial key file would make every later start
// fail on "want 32 bytes" even once space is freed (the CLI writes its token and config files
// with it too).
func WriteNewFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // O_EXCL: the file is the one created here
		return err
	}
	return nil
}

// NewMasterKey wraps raw key bytes (tests and tools).
func NewMasterKey(raw []byte) (*MasterKey, error) {
	if len(raw) != MasterKeySize {
		return nil, fmt.Errorf("store: master key must be %d bytes", MasterKeySize)
	}
	mk := &MasterKey{}
	copy(mk.key[:], raw)
	return mk, nil
}

// Derive returns a 32-byte key for one purpose (label), derived from the master key with
// HMAC-SHA256, so that other components (for example verification-code HMACs) get their own key
// without another file to manage.
func (m *MasterKey) Derive(label string) []byte {
	mac := hmac.New(sha256.New, m.key[:])
	mac.Write([]byte("idvault derive v1\x00"))
	mac.Write([]byte(label))
	return mac.Sum(nil)
}
