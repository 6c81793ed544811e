package issuelists

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// EachPendingDue calls fn with the company's open issues of the urgency
// that are pending (see above) and were first detected at or before by, in
// first-detection order. It reads the index keys of that range, then the
// issues by key: its cost grows with the issues it returns. An issue
// written since the index was updated (the index is eventually
// consistent) comes as it is now, maybe no longer open or pending.
func (x *Lists) EachPendingDue(ctx context.Context, companyID int64, urgency string, by time.Time, fn func(findings.Issue) error) error {
	kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(schema.DuePK(companyID, urgency, findings.DuePending))).
		And(expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(findings.DueUpTo(by))))
	return x.t.EachKeys(ctx, tabledef.Due.Name, kc, duePage, func(keys []ddb.Key) error {
		return x.eachRead(ctx, keys, fn)
	})
}

// CountOpenDetected counts the company's open issues of the urgency first
// detected after after (the zero time: from the first) and at or before
// upTo, pending or breached: COUNT queries of the due index, whose cost
// grows with the issues counted (some 30 index keys per 0.5 RCU), not
// with the company's issues.
func (x *Lists) CountOpenDetected(ctx context.Context, companyID int64, urgency string, after, upTo time.Time) (int64, error) {
	var n int64
	for _, state := range []string{findings.DuePending, findings.DueBreached} {
		sk := expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(findings.DueUpTo(upTo)))
		if !after.IsZero() {
			sk = expression.Key(tabledef.Due.SK).Between(expression.Value(findings.DueUpTo(after)), expression.Value(findings.DueUpTo(upTo)))
		}
		c, err := x.t.Count(ctx, tabledef.Due.Name, expression.Key(tabledef.Due.PK).Equal(expression.Value(schema.DuePK(companyID, urgency, state))).And(sk), nil)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// OpenByUrgency counts the company's open SAST issues per urgency code
// from its group counters (the company scope's CWE groups): its cost grows
// with the company's distinct CWEs, not its issues.
func (x *Lists) OpenByUrgency(ctx context.Context, companyID int64) (map[string]int64, error) {
	groups, err := x.ScopeGroups(ctx, companyID, schema.Scope{}, schema.ByCWE)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, u := range findings.Urgencies {
		out[u] = 0
		for _, g := range groups {
			out[u] += g.Cells.Total(u, "open")
		}
	}
	return out, nil
}

// duePage is how many index keys one read of EachPendingDue takes (one
// BatchGetItem of the issues).
const duePage = 100

// eachRead reads the issues of keys (in one BatchGetItem per 100) and
// calls fn with each, in the order of keys; an issue deleted since its key
// was read is left out.
func (x *Lists) eachRead(ctx context.Context, keys []ddb.Key, fn func(findings.Issue) error) error {
	got, err := x.t.ReadBatch(ctx, keys, false)
	if err != nil {
		return err
	}
	for _, k := range keys {
		av, ok := got[k]
		if !ok {
			continue
		}
		var i findings.Issue
		if err := attributevalue.UnmarshalMap(av, &i); err != nil {
			return err
		}
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}
