package baselines_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type head struct {
	ddb.Key
	ScanID string `dynamodbav:"scan_id"`
}

type chunk struct {
	ddb.Key
	IDs []string `dynamodbav:"ids"`
}

type issue struct {
	ddb.Key
	Fingerprint string `dynamodbav:"fingerprint"`
	Status      string `dynamodbav:"status"`
}

// A baseline is what the branch's latest complete scan of the tool
// reported and is still unresolved there (open or fix_in_progress), among
// the fingerprints asked for: not what it did not report, not what was
// dismissed, nothing of another branch, tool or company; a branch without
// a complete scan has none.
func TestBaselineOpen(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	b := baselines.New(tb)
	ctx := context.Background()
	const scan = "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"
	statuses := map[string]string{"fp0": "open", "fp1": "fix_in_progress", "fp2": "false_positive", "fp3": "open", "fp4": "fixed"}
	var ids []string
	items := []any{head{Key: schema.HeadKey(1, 3, "main", "semgrep"), ScanID: scan}, head{Key: schema.HeadKey(1, 3, "dev", "semgrep")}}
	for fp, status := range statuses {
		id := schema.IssueID(1, 3, "main", "semgrep", fp)
		items = append(items, issue{Key: schema.IssueKey(1, id), Fingerprint: fp, Status: status})
		if fp != "fp3" { // not reported by the latest scan
			ids = append(ids, id)
		}
	}
	// The membership in two chunks.
	items = append(items, chunk{Key: ddb.Key{PK: schema.MemberPK(1, scan), SK: schema.MemberChunkPrefix + "0"}, IDs: ids[:2]},
		chunk{Key: ddb.Key{PK: schema.MemberPK(1, scan), SK: schema.MemberChunkPrefix + "1"}, IDs: ids[2:]})
	if err := tb.BatchPut(ctx, items); err != nil {
		t.Fatal(err)
	}
	asked := []string{"fp0", "fp1", "fp2", "fp3", "fp4", "fp5", "fp0", ""}
	open, err := b.BaselineOpen(ctx, 1, 3, "main", "semgrep", asked)
	if err != nil || open.ScanID != scan || len(open.Fingerprints) != 2 || !open.Fingerprints["fp0"] || !open.Fingerprints["fp1"] {
		t.Fatalf("baseline %+v %v", open, err)
	}
	for _, c := range []struct {
		company, project int64
		branch, tool     string
	}{{1, 3, "dev", "semgrep"}, {1, 3, "feature", "semgrep"}, {1, 3, "main", "gosec"}, {1, 4, "main", "semgrep"}, {2, 3, "main", "semgrep"}} {
		if open, err := b.BaselineOpen(ctx, c.company, c.project, c.branch, c.tool, asked); err != nil || open.ScanID != "" || len(open.Fingerprints) != 0 {
			t.Fatalf("%s: %+v %v", fmt.Sprint(c), open, err)
		}
	}
}
