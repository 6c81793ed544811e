// Package tabledef is the one definition of the single DynamoDB table's keys
// and indexes. The store creates local tables from it; template.yaml and the
// CDK stacks are built from or tested against it. It has no dependencies so
// the CDK app can import it cheaply.
package tabledef

// Key attribute names of the table itself.
const (
	PK = "PK"
	SK = "SK"
)

// Index is a global secondary index with string hash and range keys.
type Index struct {
	Name string
	PK   string
	SK   string
	// Projection is ProjectionAll or ProjectionKeysOnly.
	Projection string
}

// Projections of an index (DynamoDB's names).
const (
	ProjectionAll      = "ALL"
	ProjectionKeysOnly = "KEYS_ONLY"
)

// GSI1 serves look-ups by an alternative key inside a company (for example
// issues by scan, integrations by uuid).
var GSI1 = Index{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK", Projection: ProjectionAll}

// GSI2 serves a second alternative ordering (for example issues of a scan by
// creation time).
var GSI2 = Index{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK", Projection: ProjectionAll}

// Offset holds, keys only, a copy of the sort order of every list that can be
// read by page number: a list item carries OffsetPK (the list) and OffsetSK (its
// sort key in the list). Jumping to page n reads the keys of the items
// before it here, at about 100 bytes each whatever the items' size, instead
// of the items themselves (DynamoDB charges a read by the size of the items
// read, not of the attributes returned, so a projection on an ALL index
// would not make skipping cheaper).
var Offset = Index{Name: "Offset", PK: "OffsetPK", SK: "OffsetSK", Projection: ProjectionKeysOnly}

// Due holds, keys only, every open SAST issue under its company, urgency
// and SLA state (pending: the SLA job has not yet raised its breach;
// breached), sorted by first detection: the issues past due for an urgency
// are one key range (detected at or before now minus the days to fix),
// whatever the company's SLA settings, so the SLA job and the digest read
// what is due, not every issue (see store/findings/due.go).
var Due = Index{Name: "Due", PK: "DuePK", SK: "DueSK", Projection: ProjectionKeysOnly}

// Indexes lists every global secondary index.
var Indexes = []Index{GSI1, GSI2, Offset, Due}

// AttributeNames lists every key attribute (all of type S).
func AttributeNames() []string {
	out := []string{PK, SK}
	for _, ix := range Indexes {
		out = append(out, ix.PK, ix.SK)
	}
	return out
}

// DefaultTableName is used locally when TABLE_NAME is unset.
const DefaultTableName = "codescan"

// TTLAttribute holds, on short-lived items (rate-limit windows, audit log
// entries, API key look-ups with an expiry), the epoch second after which
// DynamoDB's time-to-live deletes the item.
const TTLAttribute = "expires_at"
