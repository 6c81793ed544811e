// Package components is the store's component inventory: each project
// branch's components as each engine's uploads list them, replaced at
// ingestion at the cost of what changed, and the package index that
// answers "which projects and branches hold this package" at the cost of
// the answer (keys in schema/components.go).
package components

import (
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Components is the inventory's area of the store.
type Components struct{ t *ddb.Table }

// New returns the area over t.
func New(t *ddb.Table) *Components { return &Components{t: t} }

// SetRef names one engine's component set on a project branch and the
// scan that lists it.
type SetRef struct {
	CompanyID   int64
	ProjectID   int64
	ProjectName string
	Branch      string
	Engine      string
	ScanID      string
	ScanAt      time.Time
}

// item is one component of a set, with its package index keys.
type item struct {
	ddb.Key
	GSI1PK    string   `dynamodbav:"GSI1PK"`
	GSI1SK    string   `dynamodbav:"GSI1SK"`
	CompanyID int64    `dynamodbav:"company_id"`
	ProjectID int64    `dynamodbav:"project_id"`
	Branch    string   `dynamodbav:"branch"`
	Engine    string   `dynamodbav:"engine"`
	PURL      string   `dynamodbav:"purl"`
	Package   string   `dynamodbav:"package"`
	Version   string   `dynamodbav:"version"`
	Ecosystem string   `dynamodbav:"ecosystem"`
	Relation  string   `dynamodbav:"relation"`
	Licenses  []string `dynamodbav:"licenses,omitempty"`
}

// head is the last scan that wrote one engine's set on a branch.
type head struct {
	ddb.Key
	CompanyID   int64  `dynamodbav:"company_id"`
	ProjectID   int64  `dynamodbav:"project_id"`
	ProjectName string `dynamodbav:"project_name"`
	Branch      string `dynamodbav:"branch"`
	Engine      string `dynamodbav:"engine"`
	ScanID      string `dynamodbav:"scan_id"`
	ScanAt      string `dynamodbav:"scan_at"` // RFC 3339, UTC, microseconds: compares as text
	Count       int    `dynamodbav:"count"`
}

// counter is a directory item: a package's holders at one version, or in
// one project.
type counter struct {
	ddb.Key
	N         int64  `dynamodbav:"n"`
	Version   string `dynamodbav:"version,omitempty"`
	Ecosystem string `dynamodbav:"ecosystem,omitempty"`
}

// stamp formats a scan time so heads compare by text.
func stamp(t time.Time) string { return ddb.SortableTime(t) }
