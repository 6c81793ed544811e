package trends_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/trendmath"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Issue changes move the day records and totals of the company and of
// the project in the transaction that applies them: a window
// reads the days' openings, fixes and dismissals and the open counts now,
// per scope; a move taken back leaves the counts as they were but counts
// as a change; another company's scope is untouched.
func TestMovesAndWindow(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	today := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tb.Now = func() time.Time { return today }
	tr := trends.New(tb)
	ctx := context.Background()
	apply := func(company int64, changes ...trends.Change) []trends.Move {
		t.Helper()
		moves, err := trends.Moves(changes)
		if err != nil {
			t.Fatal(err)
		}
		items, err := tr.TxMoves(company, moves)
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Transact(ctx, items); err != nil {
			t.Fatal(err)
		}
		return moves
	}
	change := func(project int64, from, to, urgency string, at time.Time) trends.Change {
		return trends.Change{ProjectID: project, Change: trendmath.Change{From: trendmath.State{Status: from, Urgency: urgency}, To: trendmath.State{Status: to, Urgency: urgency},
			At: at, Detected: at.Add(-48 * time.Hour), Due: at.Add(24 * time.Hour)}}
	}
	yesterday := today.Add(-24 * time.Hour)
	apply(1, change(3, "", "open", "HI", yesterday), change(3, "", "open", "CR", yesterday), change(4, "", "open", "HI", yesterday))
	apply(1, change(3, "open", "fixed", "HI", today), change(4, "open", "false_positive", "HI", today))
	apply(2, change(3, "", "open", "LO", today))

	w, err := tr.Window(ctx, 1, 3, 7)
	if err != nil || len(w.Points) != 7 {
		t.Fatalf("window %+v %v", w, err)
	}
	y, d := w.Points[5], w.Points[6]
	if y.Opened != 2 || d.Fixed != 1 || d.Dismissed != 0 || w.Open.Sum() != 1 || w.Open[0] != 1 {
		t.Fatalf("project 3: yesterday %+v today %+v open %v", y, d, w.Open)
	}
	company, err := tr.Window(ctx, 1, 0, 7)
	if err != nil || company.Points[5].Opened != 3 || company.Points[6].Fixed != 1 || company.Points[6].Dismissed != 1 || company.Open.Sum() != 1 {
		t.Fatalf("company 1: %+v %v", company, err)
	}
	before, err := tr.Snapshot(ctx, 1, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	moves := apply(1, change(3, "", "open", "ME", today))
	undo := make([]trends.Move, len(moves))
	for n, m := range moves {
		undo[n] = m.Reversed()
	}
	items, err := tr.TxMoves(1, undo)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Transact(ctx, items); err != nil {
		t.Fatal(err)
	}
	after, err := tr.Snapshot(ctx, 1, 0, "")
	if err != nil || after.Totals.Open != before.Totals.Open || after.Totals.Seq <= before.Totals.Seq {
		t.Fatalf("a move taken back: %+v, was %+v (%v)", after.Totals, before.Totals, err)
	}
	if other, err := tr.Window(ctx, 2, 0, 7); err != nil || other.Open.Sum() != 1 || other.Points[6].Opened != 1 || other.Points[5].Opened != 0 {
		t.Fatalf("company 2: %+v %v", other, err)
	}
	if _, err := tr.Window(ctx, 1, 0, 0); err == nil {
		t.Fatal("a window of 0 days")
	}
}
