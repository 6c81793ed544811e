package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// A page of GET /issues reached by number skips the issues before it
// keys only (the Offset index), not by reading them: page 50 of 50 of one
// CWE's 3,000 issues (about 1.7 KB each) costs the page plus the keys of
// the issues skipped (some 180 bytes each: table and Offset keys), a
// tenth of reading the 2,500 issues.
// The page holds the same issues as the page reached by token.
func TestIssuePageByNumberSkipsKeysOnly(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company, n, size, pageNo = 11, 3000, 50, 50
	issues := make([]findings.Issue, n)
	for k := range issues {
		issues[k] = findings.Issue{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), ProjectID: 1 + int64(k%3), ProjectName: "p", Branch: "main",
			CWE: 79, FilePath: fmt.Sprintf("src/f%d.go", k%40), Urgency: "HI", Status: "open", Title: "t",
			Code: strings.Repeat("x", 1500), CreatedAt: fmt.Sprintf("2025-01-%02dT10:%02d:00Z", 1+k%28, k%60),
		}
	}
	if err := bulkload.Issues(ctx, st, company, issues, 4, nil); err != nil {
		t.Fatal(err)
	}
	offset := (pageNo - 1) * size
	if _, err := st.Lists.ListIssues(ctx, company, issuelists.IssueFilter{}, page.Request{Limit: 1}); err != nil {
		t.Fatal(err) // the store learns once that every issue has its Offset keys
	}

	var m ddb.Meter
	res, err := st.Lists.ListIssues(ddb.WithMeter(ctx, &m), company, issuelists.IssueFilter{}, page.Request{Limit: size, Offset: offset})
	got := res.Items
	if err != nil || len(got) != size || res.Count() != n || res.Offset != offset || res.Next == "" {
		t.Fatalf("page %d: %d issues of %d at %d, next %q: %v", pageNo, len(got), res.Count(), res.Offset, res.Next, err)
	}
	_, rcu, _ := m.Snapshot()

	// What reading the skipped issues costs (the skip before the Offset
	// index): the CWE's first offset+size issues from its index.
	fullRCU := 0.0
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(tabledef.GSI1.PK).Equal(expression.Value(got[0].GSI1PK))).Build()
	if err != nil {
		t.Fatal(err)
	}
	var start map[string]types.AttributeValue
	for read := 0; read < offset+size; {
		out, err := st.Client().Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(st.TableName()), IndexName: aws.String(tabledef.GSI1.Name),
			KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			Limit: aws.Int32(int32(min(offset+size-read, 1000))), ExclusiveStartKey: start, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		})
		if err != nil {
			t.Fatal(err)
		}
		read += len(out.Items)
		fullRCU += aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
		start = out.LastEvaluatedKey
	}

	// The bound: the page's own issues read whole, the skipped ones at 200
	// bytes a key (eventually consistent: 0.5 RCU per 4 KB), and the
	// counters.
	bound := 0.5*float64(offset*200+(size+1)*1800)/4096 + 5
	t.Logf("page %d of %d issues: %.1f RCU (bound %.1f); reading the skipped issues: %.1f RCU", pageNo, n, rcu, bound, fullRCU)
	if rcu > bound || rcu*5 > fullRCU {
		t.Fatalf("page %d costs %.1f RCU: over %.1f, or not a fifth of the %.1f RCU of reading the skipped issues", pageNo, rcu, bound, fullRCU)
	}

	// The same page by token.
	q := page.Request{Limit: size}
	for range pageNo - 1 {
		r, err := st.Lists.ListIssues(ctx, company, issuelists.IssueFilter{}, q)
		if err != nil {
			t.Fatal(err)
		}
		q.Token = r.Next
	}
	byTokenPage, err := st.Lists.ListIssues(ctx, company, issuelists.IssueFilter{}, q)
	if err != nil {
		t.Fatal(err)
	}
	byToken := byTokenPage.Items
	for k := range got {
		if got[k].ID != byToken[k].ID {
			t.Fatalf("issue %d: %s by number, %s by token", k, got[k].ID, byToken[k].ID)
		}
	}
}
