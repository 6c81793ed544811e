package schema

import "github.com/acme/codescan-api/shared/store/ddb"

// ExportEntity marks export items: the ingester's export stream filter selects
// new items carrying it (deployspec.ExportFilter).
const ExportEntity = "export"

// ExportKey is an export's key, inside its company's partition: another
// company's id is simply not there.
func ExportKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "EXPORT#" + id}
}

// ExportItem is an export job as stored (and as its stream record's new
// image carries it).
type ExportItem struct {
	ddb.Key
	Entity    string `dynamodbav:"entity"`
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	UserID    int64  `dynamodbav:"user_id"`
	Format    string `dynamodbav:"format"`
	// Filters are the request's filters as sent (JSON object), shown back;
	// Query is what the worker reads: the filters resolved when the export
	// was created (JSON, opaque here).
	Filters string `dynamodbav:"filters"`
	Query   string `dynamodbav:"query"`
	// ProjectID and Project name the subject of a VEX document.
	ProjectID int64  `dynamodbav:"project_id,omitempty"`
	Project   string `dynamodbav:"project,omitempty"`
	Status    string `dynamodbav:"status"`
	// Attempt counts the worker's starts; progress and the end are written
	// only by the current one.
	Attempt      int    `dynamodbav:"attempt"`
	RowsRead     int64  `dynamodbav:"rows_read"`
	RowsExpected int64  `dynamodbav:"rows_expected"`
	Rows         int64  `dynamodbav:"rows"`
	Bytes        int64  `dynamodbav:"bytes"`
	ObjectKey    string `dynamodbav:"object_key,omitempty"`
	Error        string `dynamodbav:"error,omitempty"`
	CreatedAt    string `dynamodbav:"created_at"`
	StartedAt    string `dynamodbav:"started_at,omitempty"`
	FinishedAt   string `dynamodbav:"finished_at,omitempty"`
	ExpiresAt    int64  `dynamodbav:"expires_at"`
}
