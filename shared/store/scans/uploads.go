package scans

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// CIData is the CI metadata uploaded for a scan run (one per scan: a new
// upload replaces it). Data is a JSON object whose secret-looking values
// the handler masked before storing.
type CIData struct {
	ddb.Key
	ScanID     string `dynamodbav:"scan_id"`
	RunID      string `dynamodbav:"run_id"`
	Platform   string `dynamodbav:"platform"`
	Data       string `dynamodbav:"data"`
	UploadedAt string `dynamodbav:"uploaded_at"`
}

// CIDataKey is a scan's CI metadata item (schema.ScanCIDataKey).
func CIDataKey(companyID int64, scanID string) ddb.Key {
	return schema.ScanCIDataKey(companyID, scanID)
}

// PutCIData stores the CI metadata of a scan of the company, replacing any
// earlier upload. UploadedAt defaults to now.
func (x *Scans) PutCIData(ctx context.Context, companyID int64, d CIData) error {
	d.Key = CIDataKey(companyID, d.ScanID)
	if d.UploadedAt == "" {
		d.UploadedAt = x.t.Stamp()
	}
	return x.t.PutItem(ctx, d, nil)
}

// SetScanRepoURL records the repository of a scan of the company;
// ddb.ErrNotFound when it does not exist.
func (x *Scans) SetScanRepoURL(ctx context.Context, companyID int64, scanID, repoURL string) error {
	upd := expression.Set(expression.Name("repo_url"), expression.Value(repoURL))
	return x.t.Update(ctx, Key(companyID, scanID), upd, nil, nil)
}

// SetScanPullRequest records the pull request a scan of the company built
// and returns the scan as it now is (its status read in the same write:
// whichever of this and the scan's completion comes second sees both);
// ddb.ErrNotFound when the scan does not exist.
func (x *Scans) SetScanPullRequest(ctx context.Context, companyID int64, scanID string, pr pullrequest.PullRequest) (Scan, error) {
	var out Scan
	upd := expression.Set(expression.Name("pull_request"), expression.Value(pr))
	err := x.t.Update(ctx, Key(companyID, scanID), upd, nil, &out)
	return out, err
}

// SourceBudget bounds the source files of one run (POST /code-upload).
type SourceBudget struct {
	Files int
	Bytes int64
}

// ErrBudget is returned when a run has no room left for a source file.
var ErrBudget = errors.New("source budget of the run exhausted")

// ReserveSource counts a file of size bytes against the run's budget,
// atomically (concurrent uploads of one run never overshoot), or returns
// ErrBudget and counts nothing. The count expires with the files
// (expires). A file sent again counts again: the budget bounds what a run
// may write, not what it keeps.
func (x *Scans) ReserveSource(ctx context.Context, companyID int64, runID string, size int64, b SourceBudget, expires time.Time) error {
	files, bytes := expression.Name("files"), expression.Name("bytes")
	cond := expression.AttributeNotExists(files).Or(
		files.LessThan(expression.Value(b.Files)).And(bytes.LessThanEqual(expression.Value(b.Bytes - size))))
	upd := expression.Add(files, expression.Value(1)).Add(bytes, expression.Value(size)).
		Set(expression.Name(tabledef.TTLAttribute), expression.Value(expires.Unix()))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	in := ddb.UpdateInput(x.t.Name, schema.ScanSourcesKey(companyID, runID), expr, types.ReturnValueNone)
	res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return x.t.DB.UpdateItem(ctx, in) })
	if ddb.IsConditionFailed(err) {
		return ErrBudget
	}
	if err != nil {
		return fmt.Errorf("reserve source of run %s: %w", runID, err)
	}
	ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
	return nil
}
