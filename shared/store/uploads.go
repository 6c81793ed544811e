package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// CIData is the CI metadata uploaded for a scan run (one per scan: a new
// upload replaces it). Data is a JSON object whose secret-looking values
// the handler masked before storing.
type CIData struct {
	Key
	ScanID     string `dynamodbav:"scan_id"`
	RunID      string `dynamodbav:"run_id"`
	Platform   string `dynamodbav:"platform"`
	Data       string `dynamodbav:"data"`
	UploadedAt string `dynamodbav:"uploaded_at"`
}

// ciDataKey is outside the SCAN# prefix so a range of scans never holds it.
func ciDataKey(companyID int64, scanID string) Key {
	return Key{PK: CompanyPK(companyID), SK: "SCANCI#" + scanID}
}

// PutCIData stores the CI metadata of a scan of the company, replacing any
// earlier upload. UploadedAt defaults to now.
func (s *Store) PutCIData(ctx context.Context, companyID int64, d CIData) error {
	d.Key = ciDataKey(companyID, d.ScanID)
	if d.UploadedAt == "" {
		d.UploadedAt = now()
	}
	return s.putItem(ctx, d, nil)
}

// GetCIData reads the CI metadata of a scan of the company.
func (s *Store) GetCIData(ctx context.Context, companyID int64, scanID string) (CIData, error) {
	var d CIData
	err := s.getItem(ctx, ciDataKey(companyID, scanID), &d)
	return d, err
}

// SetScanRepoURL records the repository of a scan of the company;
// ErrNotFound when it does not exist.
func (s *Store) SetScanRepoURL(ctx context.Context, companyID int64, scanID, repoURL string) error {
	upd := expression.Set(expression.Name("repo_url"), expression.Value(repoURL))
	return s.update(ctx, scanKey(companyID, scanID), upd, nil, nil)
}

// SetProjectRepoURLIfEmpty gives a project of the company a repository URL
// unless it already has one (a URL set by a person or an earlier upload is
// never overwritten), and moves the project counts of the teams whose URL
// patterns it now matches.
func (s *Store) SetProjectRepoURLIfEmpty(ctx context.Context, companyID, projectID int64, repoURL string) error {
	before, err := s.GetProject(ctx, companyID, projectID)
	if err != nil || before.RepoURL != "" {
		return err
	}
	after := before
	after.RepoURL = repoURL
	upd := expression.Set(expression.Name("repo_url"), expression.Value(repoURL))
	cond := expression.AttributeExists(expression.Name(tabledef.PK)).And(expression.AttributeNotExists(expression.Name("repo_url")))
	item, err := s.txUpdate(before.Key, upd, &cond)
	if err != nil {
		return err
	}
	err = s.writeProject(ctx, &before, after, []types.TransactWriteItem{item})
	if conditionFailedAt(err, 0) { // set meanwhile, by someone else
		return nil
	}
	return err
}
