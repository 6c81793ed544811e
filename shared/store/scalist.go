package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// SCA findings keep one identity per (project, branch, tool, advisory,
// package, version) like SAST issues (ids from IssueID): a scan that
// reports one again keeps its id, first detection (created_at) and
// status. A scan's SCA findings are kept as membership items, as its SAST
// findings are.

func scaMemberPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#SCANSCA#%s", CompanyPK(companyID), scanID)
}

// PutScanSCAIssues stores the SCA findings of a scan of the company (ids
// set by the caller) and records them as the scan's.
func (s *Store) PutScanSCAIssues(ctx context.Context, companyID int64, sc Scan, found []SCAIssue) error {
	keys := make([]Key, len(found))
	for n := range found {
		id, ok := CanonicalUUID(found[n].ID)
		if !ok {
			return fmt.Errorf("SCA issue id %q: %w", found[n].ID, ErrInvalid)
		}
		found[n].ID, found[n].CompanyID, found[n].ScanID = id, companyID, sc.ID
		found[n].setKeys()
		keys[n] = found[n].Key
	}
	existing, err := s.batchGet(ctx, keys)
	if err != nil {
		return err
	}
	items := make([]any, 0, 2*len(found))
	for n := range found {
		i := found[n]
		i.CreatedAt, i.Status = sc.CreatedAt, "open"
		if av, ok := existing[i.Key]; ok {
			var old SCAIssue
			if err := attributevalue.UnmarshalMap(av, &old); err != nil {
				return err
			}
			i.CreatedAt, i.Status, i.ScanID = old.CreatedAt, old.Status, old.ScanID
		}
		if i.Reachability.Usages == nil {
			i.Reachability.Usages = []SCAUsage{}
		}
		items = append(items, i, member{Key: Key{PK: scaMemberPK(companyID, sc.ID), SK: i.ID}, IssueID: i.ID})
	}
	return s.batchPutParallel(ctx, items)
}

// ScanSCAIssues returns at most limit of a scan's SCA findings from offset
// (by id) and how many it has.
func (s *Store) ScanSCAIssues(ctx context.Context, companyID int64, scanID string, offset, limit int) ([]SCAIssue, int, error) {
	kc := pkBeginsWith(scaMemberPK(companyID, scanID), "")
	total, err := s.count(ctx, "", kc)
	if err != nil {
		return nil, 0, err
	}
	items, err := s.queryWindow(ctx, "", kc, nil, true, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	var ms []member
	if err := attributevalue.UnmarshalListOfMaps(items, &ms); err != nil {
		return nil, 0, err
	}
	keys := make([]Key, len(ms))
	for n, m := range ms {
		keys[n] = scaKey(companyID, m.IssueID)
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, 0, err
	}
	out := []SCAIssue{}
	for _, k := range keys {
		if av, ok := got[k]; ok {
			var i SCAIssue
			if err := attributevalue.UnmarshalMap(av, &i); err != nil {
				return nil, 0, err
			}
			out = append(out, i)
		}
	}
	return out, total, nil
}

// ListSCAIssues returns at most limit SCA findings of a project (0: of the
// whole company) from offset, by id, and how many there are.
func (s *Store) ListSCAIssues(ctx context.Context, companyID, projectID int64, offset, limit int) ([]SCAIssue, int, error) {
	ix, pk := tabledef.GSI2, CompanyPK(companyID)+"#SCA"
	if projectID != 0 {
		ix, pk = tabledef.GSI1, fmt.Sprintf("%s#SCAP#%d", CompanyPK(companyID), projectID)
	}
	kc := expression.Key(ix.PK).Equal(expression.Value(pk))
	total, err := s.count(ctx, ix.Name, kc)
	if err != nil {
		return nil, 0, err
	}
	items, err := s.queryWindow(ctx, ix.Name, kc, nil, true, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := []SCAIssue{}
	err = attributevalue.UnmarshalListOfMaps(items, &out)
	return out, total, err
}

// count counts the matches of a key condition with COUNT queries: it reads
// the keys only (its capacity grows with the matches' size, nothing is
// returned).
func (s *Store) count(ctx context.Context, index string, kc expression.KeyConditionBuilder) (int, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return 0, err
	}
	n := 0
	var start map[string]types.AttributeValue
	for {
		in := &dynamodb.QueryInput{
			TableName: aws.String(s.Table), KeyConditionExpression: expr.KeyCondition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			Select: types.SelectCount, ExclusiveStartKey: start, ReturnConsumedCapacity: total,
		}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		res, err := call(ctx, func() (*dynamodb.QueryOutput, error) { return s.DB.Query(ctx, in) })
		if err != nil {
			return 0, fmt.Errorf("count: %w", err)
		}
		record(ctx, reading, res.ConsumedCapacity)
		n += int(res.Count)
		if res.LastEvaluatedKey == nil {
			return n, nil
		}
		start = res.LastEvaluatedKey
	}
}
