package schema

import "github.com/acme/codescan-api/shared/store/internal/ddb"

// BackfillState is the progress of the table's backfill of the issues'
// index keys (Due, Offset).
type BackfillState struct {
	ddb.Key
	Company int64 `dynamodbav:"company"`
	Shard   int   `dynamodbav:"shard"`
	Done    bool  `dynamodbav:"done"`
}

// IssueKeysBackfillKey is the state item of the backfill of the issues'
// index keys. (Tables whose earlier due-only backfill is done, under
// JOB#due-index, run this one once more for the Offset keys.)
var IssueKeysBackfillKey = ddb.Key{PK: "JOB#issue-index-keys", SK: "BACKFILL"}
