package scans

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
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
	Page        page.Request
}

// PageResult is where a page lies (see page.Result); ScanPage embeds it
// under this name.
type PageResult = page.Result

// ScanPage is a page of scans, newest first. Total is -1 when a filter
// makes it unknown.
type ScanPage struct {
	Scans []Scan
	Total int
	PageResult
}

// ListScans returns a page of a company's scans, newest first (creation
// time, then id).
func (x *Scans) ListScans(ctx context.Context, companyID int64, q ScanQuery) (ScanPage, error) {
	if q.ProjectID == 0 {
		return x.companyScans(ctx, companyID, q)
	}
	l := page.List{Index: tabledef.GSI1, Partition: schema.ScanProjectPK(companyID, q.ProjectID), Forward: true}
	if q.Branch != "" {
		l.Index, l.Partition = tabledef.GSI2, schema.ScanBranchPK(companyID, q.ProjectID, q.Branch)
	}
	var conds []expression.ConditionBuilder
	if q.SHA != "" {
		conds = append(conds, expression.Name("git_sha").Equal(expression.Value(q.SHA)))
	}
	if q.Status != "" {
		c := expression.Name("status").Equal(expression.Value(q.Status))
		if q.Status == ScanComplete { // scans stored before statuses existed are complete
			c = c.Or(expression.AttributeNotExists(expression.Name("status")))
		}
		conds = append(conds, c)
	}
	if len(conds) > 0 {
		f := conds[0]
		if len(conds) > 1 {
			f = f.And(conds[1])
		}
		l.Filter, l.View = &f, "sha="+q.SHA+"\x00status="+q.Status
	}
	p := ScanPage{Total: -1}
	var err error
	if p.PageResult, err = page.Read(ctx, x.t, l, q.Page, &p.Scans); err != nil {
		return ScanPage{}, err
	}
	if l.Filter == nil {
		if p.Total, err = x.l.CompanyCount(ctx, companyID, schema.ScanCount(q.ProjectID, q.Branch)); err != nil {
			return ScanPage{}, err
		}
	}
	return p, nil
}

func (x *Scans) companyScans(ctx context.Context, companyID int64, q ScanQuery) (ScanPage, error) {
	if q.Branch != "" || q.SHA != "" || q.Status != "" {
		return ScanPage{}, fmt.Errorf("branch, sha and status filters need a project: %w", ddb.ErrInvalid)
	}
	var logs []scanLogItem
	res, err := page.Read(ctx, x.t, page.List{Partition: schema.ScanLogPK(companyID), Forward: true}, q.Page, &logs)
	if err != nil {
		return ScanPage{}, err
	}
	keys := make([]ddb.Key, len(logs))
	for n, l := range logs {
		keys[n] = Key(companyID, l.ScanID)
	}
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return ScanPage{}, err
	}
	p := ScanPage{PageResult: res}
	for _, k := range keys {
		if av, ok := got[k]; ok {
			var sc Scan
			if err := attributevalue.UnmarshalMap(av, &sc); err != nil {
				return ScanPage{}, err
			}
			p.Scans = append(p.Scans, sc)
		}
	}
	p.Total, err = x.l.CompanyCount(ctx, companyID, schema.ScanCount(0, ""))
	return p, err
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
