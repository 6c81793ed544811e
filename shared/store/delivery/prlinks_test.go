package delivery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/delivery"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A pull request's comment link is held by one decoration at a time: a
// second owner waits while the lease runs and takes it once it has run
// out; releasing records the comment's id, and a release by an owner that
// lost the lease changes nothing.
func TestPRLinkLease(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	ctx := context.Background()
	target := delivery.PRTarget{CompanyID: c.ID, Integration: "0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b", Repo: "acme/pay", Number: "7", ProjectID: 3}
	now := time.Now()
	if _, err := env.Store.Deliveries.ClaimPRLink(ctx, target, "first", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Deliveries.ClaimPRLink(ctx, target, "second", now.Add(30*time.Second), time.Minute); !errors.Is(err, delivery.ErrLinkBusy) {
		t.Fatalf("a second owner during the lease: %v", err)
	}
	if err := env.Store.Deliveries.ReleasePRLink(ctx, target, "first", 42); err != nil {
		t.Fatal(err)
	}
	link, err := env.Store.Deliveries.ClaimPRLink(ctx, target, "second", now.Add(time.Second), time.Minute)
	if err != nil || link.CommentID != 42 {
		t.Fatalf("after release: %+v %v", link, err)
	}
	// The lease runs out: a third owner takes it, and the second's late
	// release is refused and keeps the id.
	if _, err := env.Store.Deliveries.ClaimPRLink(ctx, target, "third", now.Add(2*time.Minute), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Deliveries.ReleasePRLink(ctx, target, "second", 99); !errors.Is(err, delivery.ErrLinkBusy) {
		t.Fatalf("a release by an owner that lost the lease: %v", err)
	}
	if link, err := env.Store.Deliveries.ClaimPRLink(ctx, target, "third", now.Add(2*time.Minute), time.Minute); err != nil || link.CommentID != 42 {
		t.Fatalf("the comment id after a lost release: %+v %v", link, err)
	}
	// Another company's pull request with the same names is another link.
	other := env.Company(t, "Globex")
	theirs := target
	theirs.CompanyID = other.ID
	if link, err := env.Store.Deliveries.ClaimPRLink(ctx, theirs, "x", now, time.Minute); err != nil || link.CommentID != 0 {
		t.Fatalf("another company's link: %+v %v", link, err)
	}
}
