package vex_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// The store's SCA status path the import writes through
// (store/sca.SetSCAStatuses): a finding changed by another request
// between the read and the write fails its condition, is read again and
// decided again (here: left alone); another company's ids change
// nothing; one audit entry however many transactions (two chunks here),
// none without a change; counts exact.
func TestSetSCAStatuses(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{UserID: 7, Via: ledger.ViaAPIKey, KeyID: 9})
	put := func(companyID int64, n int, status string) sca.Issue {
		t.Helper()
		i, err := st.SCA.PutSCAIssue(ctx, companyID, sca.Issue{ProjectID: 1, Branch: "main", Tool: "osv-scanner", Status: status,
			Classification: fmt.Sprintf("CVE-2026-%04d", n), Package: sca.Package{Name: "left-pad", Version: "1.0.0", Ecosystem: "npm"}})
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	dismiss := func(i sca.Issue) (string, string, bool) {
		return "false_positive", "from VEX x", i.Status == "open"
	}
	audit := ledger.AuditEntry{Action: "vex.import", TargetType: "vex_document", TargetID: "x"}

	raced := put(1, 0, "open")
	calls := 0
	done, err := st.SCA.SetSCAStatuses(ctx, 1, []string{raced.ID}, func(i sca.Issue) (string, string, bool) {
		calls++
		if calls == 1 { // another request accepts the risk after this read
			other := i
			other.Status = "accepted_risk"
			if _, err := st.SCA.PutSCAIssue(ctx, 1, other); err != nil {
				t.Fatal(err)
			}
		}
		return dismiss(i)
	}, audit)
	if err != nil || len(done) != 0 || calls != 2 {
		t.Fatalf("raced: done %v, %d calls, %v", done, calls, err)
	}
	if got, _ := st.SCA.GetSCAIssue(ctx, 1, raced.ID); got.Status != "accepted_risk" {
		t.Fatalf("raced finding %s", got.Status)
	}

	var ids []string
	for n := range 120 { // more than one transaction's chunk
		ids = append(ids, put(1, n+1, "open").ID)
	}
	if done, err := st.SCA.SetSCAStatuses(ctx, 2, ids, dismiss, audit); err != nil || len(done) != 0 {
		t.Fatalf("another company's ids: %v %v", done, err)
	}
	done, err = st.SCA.SetSCAStatuses(ctx, 1, append(ids, raced.ID), dismiss, audit)
	if err != nil || len(done) != len(ids) {
		t.Fatalf("changed %d of %d: %v", len(done), len(ids), err)
	}
	if again, err := st.SCA.SetSCAStatuses(ctx, 1, ids, dismiss, audit); err != nil || len(again) != 0 {
		t.Fatalf("again: %v %v", again, err)
	}
	for _, id := range ids {
		if got, _ := st.SCA.GetSCAIssue(ctx, 1, id); got.Status != "false_positive" || got.Reason != "from VEX x" {
			t.Fatalf("%s: %s %q", id, got.Status, got.Reason)
		}
	}
	entriesPage, err := st.Tenancy.ListAudit(ctx, 1, tenancy.AuditFilter{Action: "vex.import"}, page.Request{Limit: 10})
	entries := entriesPage.Items
	if err != nil || len(entries) != 1 || entries[0].Actor.UserID != 7 {
		t.Fatalf("audit %+v %v", entries, err)
	}
	testenv.Recount(t, st, 1)
}
