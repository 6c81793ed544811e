package delivery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/delivery"
)

// A finding's review link: the first claim finds nothing written before;
// a claim after an attempt that died before recording the comment finds
// the link without an id (so the decoration searches the host before it
// posts); after the id is recorded, every claim sees it. Leases keep two
// decorations apart, and another company's finding of the same names is
// another link.
func TestReviewLinkLease(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	ctx := context.Background()
	target := delivery.ReviewTarget{CompanyID: c.ID, Integration: "0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b", Repo: "acme/pay", Number: "7", IssueID: "iss-1"}
	now := time.Now()
	first, err := env.Store.Deliveries.ClaimReviewLink(ctx, target, "a", now, time.Minute)
	if err != nil || first.Exists() || first.CommentID != 0 {
		t.Fatalf("first claim: %+v %v", first, err)
	}
	if _, err := env.Store.Deliveries.ClaimReviewLink(ctx, target, "b", now.Add(time.Second), time.Minute); !errors.Is(err, delivery.ErrLinkBusy) {
		t.Fatalf("a second owner during the lease: %v", err)
	}
	// "a" died after posting: its lease runs out, "b" finds a link without an id.
	died, err := env.Store.Deliveries.ClaimReviewLink(ctx, target, "b", now.Add(2*time.Minute), time.Minute)
	if err != nil || !died.Exists() || died.CommentID != 0 {
		t.Fatalf("after a dead attempt: %+v %v", died, err)
	}
	if err := env.Store.Deliveries.ReleaseReviewLink(ctx, target, "a", 5); !errors.Is(err, delivery.ErrLinkBusy) {
		t.Fatalf("a release by an owner that lost the lease: %v", err)
	}
	if err := env.Store.Deliveries.ReleaseReviewLink(ctx, target, "b", 77); err != nil {
		t.Fatal(err)
	}
	again, err := env.Store.Deliveries.ClaimReviewLink(ctx, target, "c", now.Add(3*time.Minute), time.Minute)
	if err != nil || again.CommentID != 77 {
		t.Fatalf("after the record: %+v %v", again, err)
	}
	if err := env.Store.Deliveries.ReleaseReviewLink(ctx, target, "c", 0); err != nil {
		t.Fatal(err)
	}
	if l, err := env.Store.Deliveries.ClaimReviewLink(ctx, target, "d", now.Add(4*time.Minute), time.Minute); err != nil || l.CommentID != 77 {
		t.Fatalf("a release without an id keeps the known one: %+v %v", l, err)
	}
	other := env.Company(t, "Globex")
	theirs := target
	theirs.CompanyID = other.ID
	if l, err := env.Store.Deliveries.ClaimReviewLink(ctx, theirs, "x", now, time.Minute); err != nil || l.Exists() {
		t.Fatalf("another company's link: %+v %v", l, err)
	}
}
