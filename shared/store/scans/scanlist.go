package scans

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Scans are listed newest first, by key:
//
//   - a project's scans:      GSI1 on the scan item, GSI1PK C#<c>#SCANS#P<project>,
//     GSI1SK <inverted creation millis>#<scan id>
//   - a project branch's:     GSI2, GSI2PK C#<c>#SCANS#P<project>#<branch hash>, same sort key
//   - the company's:          log items PK C#<c>#SCANLOG, SK the same sort key, pointing
//     at the scan (read back by key, so a page costs its size)
//
// and counted on write (COUNT#SCANS, COUNT#SCANS#P<project>,
// COUNT#SCANS#P<project>#<branch hash>) in CreateScan's transaction.
type listedScan struct {
	Scan
	GSI1PK string `dynamodbav:"GSI1PK"`
	GSI1SK string `dynamodbav:"GSI1SK"`
	GSI2PK string `dynamodbav:"GSI2PK"`
	GSI2SK string `dynamodbav:"GSI2SK"`
}

type scanLogItem struct {
	ddb.Key
	ScanID string `dynamodbav:"scan_id"`
}

func scanOrder(sc Scan) (string, error) {
	t, err := time.Parse(time.RFC3339, sc.CreatedAt)
	if err != nil {
		return "", fmt.Errorf("scan created_at %q: %w", sc.CreatedAt, ddb.ErrInvalid)
	}
	return schema.NewestFirst(t.UnixMilli(), sc.ID), nil
}

// scanListWrites are the scan item with its list keys, its company log item
// and its three counts, for CreateScan's transaction.
func (x *Scans) scanListWrites(sc Scan) ([]types.TransactWriteItem, error) {
	order, err := scanOrder(sc)
	if err != nil {
		return nil, err
	}
	item, err := x.t.TxPutNew(listedScan{Scan: sc,
		GSI1PK: schema.ScanProjectPK(sc.CompanyID, sc.ProjectID), GSI1SK: order,
		GSI2PK: schema.ScanBranchPK(sc.CompanyID, sc.ProjectID, sc.Branch), GSI2SK: order})
	if err != nil {
		return nil, err
	}
	log, err := x.t.TxPutNew(scanLogItem{Key: ddb.Key{PK: schema.ScanLogPK(sc.CompanyID), SK: order}, ScanID: sc.ID})
	if err != nil {
		return nil, err
	}
	out := []types.TransactWriteItem{item, log}
	for _, name := range []string{schema.ScanCount(0, ""), schema.ScanCount(sc.ProjectID, ""), schema.ScanCount(sc.ProjectID, sc.Branch)} {
		c, err := x.l.TxCount(sc.CompanyID, name, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ScanQuery selects scans of a company. Branch, SHA and Status need a
// project. Branch is served by key; SHA and Status filter the project's (or
// branch's) range, so such a page reads the scans it skips: its cost grows
// with how far back the matches lie, and its total is unknown.
type ScanQuery struct {
	ProjectID   int64
	Branch      string
	SHA, Status string
}

// ListScans returns a page of a company's scans, newest first (creation
// time, then id), with their number unless SHA or Status filter them.
func (x *Scans) ListScans(ctx context.Context, companyID int64, sel ScanQuery, q page.Request) (page.Page[Scan], error) {
	if sel.ProjectID == 0 {
		return x.companyScans(ctx, companyID, sel, q)
	}
	l := page.List{Index: tabledef.GSI1, Partition: schema.ScanProjectPK(companyID, sel.ProjectID), Forward: true}
	if sel.Branch != "" {
		l.Index, l.Partition = tabledef.GSI2, schema.ScanBranchPK(companyID, sel.ProjectID, sel.Branch)
	}
	var conds []expression.ConditionBuilder
	if sel.SHA != "" {
		conds = append(conds, expression.Name("git_sha").Equal(expression.Value(sel.SHA)))
	}
	if sel.Status != "" {
		c := expression.Name("status").Equal(expression.Value(sel.Status))
		if sel.Status == ScanComplete { // scans stored before statuses existed are complete
			c = c.Or(expression.AttributeNotExists(expression.Name("status")))
		}
		conds = append(conds, c)
	}
	if len(conds) > 0 {
		f := conds[0]
		if len(conds) > 1 {
			f = f.And(conds[1])
		}
		l.Filter, l.View = &f, "sha="+sel.SHA+"\x00status="+sel.Status
	}
	if l.Filter != nil {
		return page.ReadPage[Scan](ctx, x.t, l, q)
	}
	return counted.Page[Scan](ctx, x.t, x.l, companyID, l, q, schema.ScanCount(sel.ProjectID, sel.Branch))
}

func (x *Scans) companyScans(ctx context.Context, companyID int64, sel ScanQuery, q page.Request) (page.Page[Scan], error) {
	if sel.Branch != "" || sel.SHA != "" || sel.Status != "" {
		return page.Page[Scan]{}, fmt.Errorf("branch, sha and status filters need a project: %w", ddb.ErrInvalid)
	}
	logs, err := counted.Page[scanLogItem](ctx, x.t, x.l, companyID, page.List{Partition: schema.ScanLogPK(companyID), Forward: true}, q, schema.ScanCount(0, ""))
	if err != nil {
		return page.Page[Scan]{}, err
	}
	keys := make([]ddb.Key, len(logs.Items))
	for n, l := range logs.Items {
		keys[n] = Key(companyID, l.ScanID)
	}
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return page.Page[Scan]{}, err
	}
	p := page.Page[Scan]{Items: []Scan{}, Offset: logs.Offset, Next: logs.Next, Total: logs.Total}
	for _, k := range keys {
		if av, ok := got[k]; ok {
			var sc Scan
			if err := attributevalue.UnmarshalMap(av, &sc); err != nil {
				return page.Page[Scan]{}, err
			}
			p.Items = append(p.Items, sc)
		}
	}
	return p, nil
}

// FirstScanBranch is the branch of a project's oldest scan (ddb.ErrNotFound
// before its first scan): the default branch of a project that has none
// set.
func (x *Scans) FirstScanBranch(ctx context.Context, companyID, projectID int64) (string, error) {
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(schema.ScanProjectPK(companyID, projectID)))
	items, _, err := x.t.QueryRaw(ctx, tabledef.GSI1.Name, kc, nil, false, 1, nil)
	if err != nil {
		return "", err
	}
	if len(items) == 0 {
		return "", ddb.ErrNotFound
	}
	var sc Scan
	err = attributevalue.UnmarshalMap(items[0], &sc)
	return sc.Branch, err
}
