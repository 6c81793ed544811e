package demo_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/secrets"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The demo is seeded once (it takes seconds) and each part of it checked
// on that seed: the admin resources, the findings, the uploads to try.
func TestSeed(t *testing.T) {
	t.Setenv(secrets.EnvKMSKeyID, "")
	t.Setenv(secrets.EnvKeyFile, filepath.Join(t.TempDir(), "integration-token.key"))
	st := testenv.NewStore(t)
	doc, err := demo.Seed(context.Background(), st, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("admin", func(t *testing.T) { checkAdmin(t, st, doc) })
	t.Run("findings", func(t *testing.T) { checkFindings(t, st, doc) })
	t.Run("uploads", func(t *testing.T) { checkUploads(t, st, doc) })
}
