package schema

import "github.com/acme/codescan-api/shared/store/internal/ddb"

// BackfillState is the progress of the table's due index backfill.
type BackfillState struct {
	ddb.Key
	Company int64 `dynamodbav:"company"`
	Shard   int   `dynamodbav:"shard"`
	Done    bool  `dynamodbav:"done"`
}

// DueBackfillKey is the due index backfill's state item.
var DueBackfillKey = ddb.Key{PK: "JOB#due-index", SK: "BACKFILL"}
