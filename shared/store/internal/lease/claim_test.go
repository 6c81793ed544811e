package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

type link struct {
	ddb.Key
	Owner   string `dynamodbav:"lease_owner"`
	Until   string `dynamodbav:"lease_until"`
	Comment int64  `dynamodbav:"comment_id"`
	Rule    string `dynamodbav:"rule_id"`
}

// A claim is one attempt at a time, without waiting: a second owner is
// refused while the claim runs and takes it once it ran out; the first
// owner then can neither record nor give back; the holder's record gives
// the claim back, and what Claim's set adds is written with it.
func TestClaimIsOneAttemptAtATime(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	k := ddb.Key{PK: "C#1", SK: "LINK#r1"}
	rule := func(upd expression.UpdateBuilder) expression.UpdateBuilder {
		return upd.Set(expression.Name("rule_id"), expression.Value("r1"))
	}
	decode := func(item map[string]types.AttributeValue) link {
		t.Helper()
		var l link
		if err := attributevalue.UnmarshalMap(item, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	item, err := lease.Claim(ctx, tb, k, "a", t0, time.Minute, rule, types.ReturnValueAllNew)
	if l := decode(item); err != nil || l.Owner != "a" || l.Rule != "r1" {
		t.Fatalf("first claim: %+v, %v", l, err)
	}
	if _, err := lease.Claim(ctx, tb, k, "b", t0.Add(30*time.Second), time.Minute, nil, types.ReturnValueAllNew); !errors.Is(err, lease.ErrClaimed) {
		t.Fatalf("claim while a's runs: %v, want ErrClaimed", err)
	}
	item, err = lease.Claim(ctx, tb, k, "b", t0.Add(2*time.Minute), time.Minute, nil, types.ReturnValueAllOld)
	if l := decode(item); err != nil || l.Owner != "a" {
		t.Fatalf("claim after a's ran out: %+v, %v (the old image names a)", l, err)
	}
	late := expression.Set(expression.Name("comment_id"), expression.Value(7))
	if err := lease.Unclaim(ctx, tb, k, "a", late); !errors.Is(err, lease.ErrClaimed) {
		t.Fatalf("a's late record: %v, want ErrClaimed", err)
	}
	if err := lease.Unclaim(ctx, tb, k, "b", expression.Set(expression.Name("comment_id"), expression.Value(9))); err != nil {
		t.Fatalf("b's record: %v", err)
	}
	var l link
	if err := tb.GetItemConsistent(ctx, k, &l); err != nil || l.Owner != "" || l.Until != "" || l.Comment != 9 || l.Rule != "r1" {
		t.Fatalf("after b's record: %+v, %v", l, err)
	}
	if _, err := lease.Claim(ctx, tb, k, "c", t0.Add(2*time.Minute), time.Minute, nil, types.ReturnValueNone); err != nil {
		t.Fatalf("claim after the record: %v", err)
	}
	if err := lease.Unclaim(ctx, tb, ddb.Key{PK: "C#1", SK: "LINK#gone"}, "c", expression.UpdateBuilder{}); !errors.Is(err, lease.ErrClaimed) {
		t.Fatalf("unclaim of no item: %v, want ErrClaimed", err)
	}
}
