package secrets

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// localPrefix marks values sealed by a local key (format version 1).
const localPrefix = "local:v1:"

const keySize = 32 // AES-256

// Local seals with AES-256-GCM under a key held in memory.
type Local struct{ aead cipher.AEAD }

// NewLocal returns a sealer for a 32-byte key.
func NewLocal(key []byte) (*Local, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("secrets: key is %d bytes, want %d", len(key), keySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Local{aead: aead}, nil
}

// LoadOrCreateKeyFile reads a 32-byte key file, creating it (mode 0600,
// random key) on first use. Concurrent first uses agree on one key.
func LoadOrCreateKeyFile(path string) (*Local, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: key file: %w", err)
	}
	return NewLocal(key)
}

func createKeyFile(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	// Write a temporary file, then link it into place: the link fails if
	// another process created the key first, and then its key is used.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	} else if err != nil {
		return nil, err
	}
	return key, nil
}

// Seal encrypts plaintext for record.
func (l *Local) Seal(_ context.Context, plaintext, record string) (string, error) {
	nonce := make([]byte, l.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := l.aead.Seal(nonce, nonce, []byte(plaintext), []byte(record))
	return localPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for record.
func (l *Local) Open(_ context.Context, sealed, record string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, localPrefix)
	if !ok {
		return "", ErrMalformed
	}
	b, err := base64.RawStdEncoding.DecodeString(raw)
	n := l.aead.NonceSize()
	if err != nil || len(b) < n {
		return "", ErrMalformed
	}
	plain, err := l.aead.Open(nil, b[:n], b[n:], []byte(record))
	if err != nil {
		return "", ErrMalformed
	}
	return string(plain), nil
}
