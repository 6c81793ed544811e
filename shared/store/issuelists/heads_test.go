package issuelists_test

import (
	"context"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type head struct {
	ddb.Key
	ScanID        string `dynamodbav:"scan_id,omitempty"`
	ScanCreatedAt string `dynamodbav:"scan_created_at,omitempty"`
}

// ScanHeadsOf answers the heads of a branch and tool that name a scan, one
// per upload category, newest first: not an emptied head, not another
// branch's, tool's or company's.
func TestScanHeadsOf(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	l := issuelists.New(tb, nil, nil, nil, nil, nil, nil)
	ctx := context.Background()
	var items []any
	for _, h := range []head{
		{Key: schema.HeadKey(1, 7, "main", "semgrep")}, // emptied: a category took its truth over
		{Key: schema.CategoryHeadKey(1, 7, "main", "semgrep", "/language:go"), ScanID: "go-2", ScanCreatedAt: "2026-11-02T00:00:00Z"},
		{Key: schema.CategoryHeadKey(1, 7, "main", "semgrep", "/language:py"), ScanID: "py-3", ScanCreatedAt: "2026-11-03T00:00:00Z"},
		{Key: schema.HeadKey(1, 7, "dev", "semgrep"), ScanID: "dev-9", ScanCreatedAt: "2026-11-09T00:00:00Z"},
		{Key: schema.HeadKey(1, 7, "main", "gosec"), ScanID: "gosec-8", ScanCreatedAt: "2026-11-08T00:00:00Z"},
		{Key: schema.HeadKey(2, 7, "main", "semgrep"), ScanID: "other-7", ScanCreatedAt: "2026-11-07T00:00:00Z"},
	} {
		items = append(items, h)
	}
	if err := tb.BatchPut(ctx, items); err != nil {
		t.Fatal(err)
	}
	heads, err := l.ScanHeadsOf(ctx, 1, 7, "main", "semgrep")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range heads {
		got = append(got, h.ScanID)
	}
	if len(got) != 2 || got[0] != "py-3" || got[1] != "go-2" {
		t.Fatalf("heads of main/semgrep: %v, want [py-3 go-2]", got)
	}
	if heads, err := l.ScanHeadsOf(ctx, 1, 7, "main", "bandit"); err != nil || len(heads) != 0 {
		t.Fatalf("a tool never scanned: %v %v", heads, err)
	}
}
