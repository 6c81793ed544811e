package scans

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// An uploaded scan waits for the ingester in status processing. If the
// ingester gives up on it (its stream record went to the failure queue
// after the retries), nothing would ever end it and the client would poll
// until its own timeout. So every such scan has a marker in one
// operator partition, written in the transaction that creates the scan
// and deleted in the one that completes or fails it; the sweep job finds
// the old markers by key. No route reads this partition.
const processingPK = schema.IngestProcessingPK

// processingMarker is the marker of a scan waiting for the ingester,
// sorted by the scan's creation.
type processingMarker struct {
	ddb.Key
	CompanyID int64  `dynamodbav:"company_id"`
	ScanID    string `dynamodbav:"scan_id"`
}

// processingKey is the marker's key: creation time (unix ms), company and
// scan.
func processingKey(sc Scan) (ddb.Key, error) {
	t, err := time.Parse(time.RFC3339, sc.CreatedAt)
	if err != nil {
		return ddb.Key{}, fmt.Errorf("scan %s created at %q: %w", sc.ID, sc.CreatedAt, ddb.ErrInvalid)
	}
	return schema.IngestProcessingKey(t.UnixMilli(), sc.CompanyID, sc.ID), nil
}

// awaitsIngester tells whether a new scan is one the ingester will pick
// up (deployspec.IngestFilter selects the same).
func awaitsIngester(sc Scan) bool { return sc.RunID != "" && sc.Status == ScanProcessing }

// txProcessingMarker puts the marker of a new scan.
func (x *Scans) txProcessingMarker(sc Scan) (types.TransactWriteItem, error) {
	k, err := processingKey(sc)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return x.t.TxPut(processingMarker{Key: k, CompanyID: sc.CompanyID, ScanID: sc.ID}, nil)
}

// TxClearProcessing deletes the marker of an uploaded scan that is ending
// (whether or not it has one: scans from before the markers have none);
// other scans never have one.
func TxClearProcessing(t *ddb.Table, sc Scan) ([]types.TransactWriteItem, error) {
	if sc.RunID == "" {
		return nil, nil
	}
	k, err := processingKey(sc)
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{t.TxDeleteKey(k)}, nil
}

// StalledScan names a scan still waiting for the ingester.
type StalledScan struct {
	CompanyID int64
	ScanID    string
	marker    ddb.Key
}

// StalledScans returns at most limit scans created before the given time
// that still wait for the ingester, oldest first.
func (x *Scans) StalledScans(ctx context.Context, before time.Time, limit int) ([]StalledScan, error) {
	kc := expression.Key(tabledef.PK).Equal(expression.Value(processingPK)).
		And(expression.Key(tabledef.SK).LessThan(expression.Value(fmt.Sprintf("%013d", before.UnixMilli()))))
	items, _, err := x.t.QueryRaw(ctx, "", kc, nil, true, int32(limit), nil)
	if err != nil {
		return nil, err
	}
	var markers []processingMarker
	if err := attributevalue.UnmarshalListOfMaps(items, &markers); err != nil {
		return nil, err
	}
	out := make([]StalledScan, 0, len(markers))
	for _, m := range markers {
		out = append(out, StalledScan{CompanyID: m.CompanyID, ScanID: m.ScanID, marker: m.Key})
	}
	return out, nil
}

// ClearStalled deletes the marker of a scan that no longer waits (it
// ended, or it is gone).
func (x *Scans) ClearStalled(ctx context.Context, st StalledScan) error {
	return x.t.DeleteItem(ctx, st.marker)
}
