package testenv

import (
	"context"
	"testing"

	"github.com/acme/codescan-api/shared/recount"
	"github.com/acme/codescan-api/shared/store"
)

// Recount fails the test unless every group counter and list total of the
// company equals a recount from its findings (see recount.Check).
func Recount(t testing.TB, st *store.Store, companyID int64) {
	t.Helper()
	if err := recount.Check(context.Background(), recount.StoreOf(st), companyID); err != nil {
		t.Fatal(err)
	}
}
