package triage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// accepted is an issue's key with its due index entry: accepted until end.
type accepted struct {
	ddb.Key
	DuePK string `dynamodbav:"DuePK"`
	DueSK string `dynamodbav:"DueSK"`
}

// The company's accepted risks ending before a time are read soonest end
// first, a page at a time; an end at that time or later, and another
// company's, are not.
func TestEachEndingBefore(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	a := triage.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var items []any
	for n := range 230 {
		id := schema.IssueID(1, 3, "main", "semgrep", string(rune('a'+n%26))+time.Duration(n).String())
		end := t0.Add(time.Duration(230-n) * time.Minute) // the last written ends first
		items = append(items, accepted{Key: schema.IssueKey(1, id), DuePK: schema.AcceptedDuePK(1), DueSK: schema.AcceptedDueSK(end, id)})
	}
	other := schema.IssueID(2, 3, "main", "semgrep", "x")
	items = append(items, accepted{Key: schema.IssueKey(2, other), DuePK: schema.AcceptedDuePK(2), DueSK: schema.AcceptedDueSK(t0, other)})
	if err := tb.BatchPut(ctx, items); err != nil {
		t.Fatal(err)
	}
	cut := t0.Add(201 * time.Minute) // ends at 1..200 minutes are before it
	var pages, keys int
	var last ddb.Key
	err := a.EachEndingBefore(ctx, 1, cut, func(page []ddb.Key) error {
		pages++
		for _, k := range page {
			if !strings.HasPrefix(k.PK, schema.CompanyPK(1)+"#") {
				t.Fatalf("another company's key %+v", k)
			}
			if keys > 0 && k == last {
				t.Fatalf("key %+v twice", k)
			}
			last = k
			keys++
		}
		return nil
	})
	if err != nil || keys != 200 || pages != 2 {
		t.Fatalf("%d keys in %d pages: %v", keys, pages, err)
	}
	if want := items[30].(accepted).Key; last != want { // 200 minutes: the latest end before the cut
		t.Fatalf("last key %+v, want %+v", last, want)
	}
	if err := schema.CheckAcceptanceEnd(t0, t0); err == nil {
		t.Fatal("an end that is not after now")
	}
	if err := schema.CheckAcceptanceEnd(t0.AddDate(0, 0, schema.MaxAcceptanceDays+1), t0); err == nil {
		t.Fatal("an end past MaxDays")
	}
	if err := schema.CheckAcceptanceEnd(t0.AddDate(0, 0, schema.MaxAcceptanceDays), t0); err != nil {
		t.Fatal(err)
	}
}
