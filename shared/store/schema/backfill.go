package schema

import "github.com/acme/codescan-api/shared/store/ddb"

// BackfillState is the progress of the table's backfill of the issues'
// index keys (Due, Offset).
type BackfillState struct {
	ddb.Key
	Company int64 `dynamodbav:"company"`
	Shard   int   `dynamodbav:"shard"`
	Done    bool  `dynamodbav:"done"`
}

// IssueKeysBackfillKey is the state item of the backfill of the issues'
// index keys. Its sort key names the keys' version, so a table whose
// earlier backfill is done runs this one once more: version 2 puts the
// project in DueSK.
var IssueKeysBackfillKey = ddb.Key{PK: "JOB#issue-index-keys", SK: "BACKFILL#2"}

// ProjectRepoBackfillKey is the state item of the backfill of the
// projects' lower-cased repository URL (Project.RepoURLLower). Company is
// the first company not yet through.
var ProjectRepoBackfillKey = ddb.Key{PK: "JOB#project-repo-keys", SK: "BACKFILL#1"}
