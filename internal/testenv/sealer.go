package testenv

import (
	"crypto/rand"
	"testing"

	"github.com/acme/codescan-api/shared/secrets"
)

// Sealer is a local sealer under a random key of the test's own: what the
// tests of sealed secrets (webhook secrets, integration tokens) seal and
// open with.
func Sealer(t testing.TB) secrets.Sealer {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, err := secrets.NewLocal(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
