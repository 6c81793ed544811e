// Package sca is the store's area of software composition analysis
// findings: a vulnerable dependency each, with one identity per (project,
// branch, tool, advisory, package, version); the company's, a project's
// and a scan's lists, counted on write (internal/counted); the lists
// filtered by the exploitability feeds (exploits); the SLA deadline; and
// the triage rules that set their status, at ingestion and by an
// application (its SCA part: the targets, the writes, an operation's
// step).
package sca

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// SCA reads and writes SCA findings.
type SCA struct {
	t *ddb.Table
	l *ledger.Ledger
	d Deps
}

// Deps are what the SCA findings need of other areas: their CVEs' values
// and list entries, and the active triage rules.
type Deps struct {
	Exploits interface {
		Lookup(ctx context.Context, cves []string) (map[string]exploits.Enrichment, bool, error)
		CountEntries(ctx context.Context, partition, from string) (int, error)
	}
	Rules interface {
		ActiveTriageRules(ctx context.Context, companyID, projectID int64) ([]triagemodel.Rule, error)
	}
}

// New returns the area on a table, its ledger and the areas it reads.
func New(t *ddb.Table, l *ledger.Ledger, d Deps) *SCA { return &SCA{t: t, l: l, d: d} }

// Issue is a software composition analysis finding: a vulnerable
// dependency and whether the vulnerable code is reachable. Its JSON form is
// the API's SCA issue.
type Issue struct {
	ddb.Key           `json:"-"`
	schema.OffsetKeys `json:"-"`
	GSI1PK            string   `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK            string   `dynamodbav:"GSI1SK,omitempty" json:"-"`
	GSI2PK            string   `dynamodbav:"GSI2PK,omitempty" json:"-"`
	GSI2SK            string   `dynamodbav:"GSI2SK,omitempty" json:"-"`
	ID                string   `dynamodbav:"id" json:"id"` // uuid
	CompanyID         int64    `dynamodbav:"company_id" json:"-"`
	ProjectID         int64    `dynamodbav:"project_id" json:"-"`
	Branch            string   `dynamodbav:"branch,omitempty" json:"branch,omitempty"`
	Tool              string   `dynamodbav:"tool,omitempty" json:"tool,omitempty"`
	ScanID            string   `dynamodbav:"scan_id,omitempty" json:"scan_id,omitempty"` // first reported by
	IDs               []string `dynamodbav:"ids,omitempty" json:"ids,omitempty"`         // advisory ids: OSV, GHSA, CVE
	// Sources are the scanners reporting it, by tool (correlate.go): one
	// finding per vulnerability whichever scanners report it.
	Sources        []Source     `dynamodbav:"sources" json:"sources,omitempty"` // nil: stored before sources (SourceList)
	CreatedAt      string       `dynamodbav:"created_at" json:"created_at"`
	Description    string       `dynamodbav:"description" json:"description"`
	Details        string       `dynamodbav:"details" json:"details"`
	Severity       string       `dynamodbav:"severity" json:"severity"`
	CVSSScore      float64      `dynamodbav:"cvss_score" json:"cvss_score"`
	Classification string       `dynamodbav:"classification" json:"classification"`
	CVE            string       `dynamodbav:"cve" json:"cve"`
	Package        Package      `dynamodbav:"package" json:"package"`
	Location       Location     `dynamodbav:"location" json:"location"`
	Reachability   Reachability `dynamodbav:"reachability" json:"reachability"`
	Status         string       `dynamodbav:"status" json:"status"`
	// CWE is the weakness the report names (CycloneDX's cwes; 0: none),
	// for triage rules.
	CWE int `dynamodbav:"cwe,omitempty" json:"-"`
	// Reason and TriageRuleID are the reason and the rule of the status a
	// triage rule gave (rules.go); shown by the API's view.
	Reason       string `dynamodbav:"reason,omitempty" json:"-"`
	TriageRuleID string `dynamodbav:"triage_rule_id,omitempty" json:"-"`
	// What the exploitability feeds say of its CVE (store/exploits).
	exploits.Enrichment
}

// Package is the vulnerable dependency.
type Package struct {
	Name       string `dynamodbav:"name" json:"name"`
	Version    string `dynamodbav:"version" json:"version"`
	Ecosystem  string `dynamodbav:"ecosystem" json:"ecosystem"`
	FixVersion string `dynamodbav:"fix_version" json:"fix_version"`
}

// Location is the manifest that declares the dependency.
type Location struct {
	Path string `dynamodbav:"path" json:"path"`
}

// Reachability tells whether the vulnerable code is reachable and from
// where it is used.
type Reachability struct {
	// IsReachable is true when a call path reaches the vulnerable code.
	IsReachable bool    `dynamodbav:"is_reachable" json:"is_reachable"`
	Status      string  `dynamodbav:"status" json:"status"`
	Description string  `dynamodbav:"description" json:"description"`
	Usages      []Usage `dynamodbav:"usages" json:"usages"`
}

// Usage is one place the dependency is used.
type Usage struct {
	ID                  string `dynamodbav:"id" json:"id"` // uuid
	Filename            string `dynamodbav:"filename" json:"filename"`
	CodeLine            string `dynamodbav:"code_line" json:"code_line"`
	IsFunctionReachable string `dynamodbav:"is_function_reachable" json:"is_function_reachable"`
	Reasoning           string `dynamodbav:"reasoning" json:"reasoning"`
}

// PutSCAIssue stores an SCA finding of a company (replacing one with the
// same id) and counts it. An empty ID gets a random uuid, an empty
// CreatedAt now.
func (x *SCA) PutSCAIssue(ctx context.Context, companyID int64, i Issue) (Issue, error) {
	if i.ID == "" {
		i.ID = uuid.NewString()
	}
	id, ok := schema.CanonicalUUID(i.ID)
	if !ok {
		return Issue{}, fmt.Errorf("SCA issue id %q: %w", i.ID, ddb.ErrInvalid)
	}
	if i.CreatedAt == "" {
		i.CreatedAt = x.t.Stamp()
	}
	if i.Reachability.Usages == nil {
		i.Reachability.Usages = []Usage{}
	}
	i.ID, i.CompanyID = id, companyID
	i.setKeys()
	current, imported, err := x.d.Exploits.Lookup(ctx, []string{i.CVE})
	if err != nil {
		return Issue{}, err
	}
	i.Enrichment = exploits.Refresh(i.Enrichment, current[i.CVE], imported)
	items := append([]counted.Item{{Key: i.Key,
		Build: func(map[string]types.AttributeValue) (any, []counted.Ref, error) { return i, counts(i), nil }}}, exploitItems(i)...)
	err = counted.Put(ctx, x.t, schema.CountJournalPK(companyID, schema.SCAIssueSK(id)), items)
	return i, err
}

// GetSCAIssue reads an SCA finding of a company; an id that is not a uuid is
// ErrNotFound like any unknown id.
func (x *SCA) GetSCAIssue(ctx context.Context, companyID int64, id string) (Issue, error) {
	cid, ok := schema.CanonicalUUID(id)
	if !ok {
		return Issue{}, ddb.ErrNotFound
	}
	var i Issue
	err := x.t.GetItem(ctx, schema.SCAIssueKey(companyID, cid), &i)
	return i, err
}

// EachSCAIssue calls fn with every SCA finding of a company (as EachIssue,
// for checks).
func (x *SCA) EachSCAIssue(ctx context.Context, companyID int64, fn func(Issue) error) error {
	return ddb.Each(ctx, x.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.SCAIssueSKPrefix), fn)
}

// setKeys sets the item's key and its list keys: the project's SCA issues
// (GSI1) and the company's (GSI2, with its Offset keys), by id.
func (i *Issue) setKeys() {
	i.Key = schema.SCAIssueKey(i.CompanyID, i.ID)
	i.GSI1PK, i.GSI1SK = schema.SCAProjectPK(i.CompanyID, i.ProjectID), i.ID
	i.GSI2PK, i.GSI2SK = schema.SCACompanyPK(i.CompanyID), i.ID
	i.OffsetKeys = schema.OffsetKeys{OffsetPK: list(i.CompanyID, 0).OffsetPartition, OffsetSK: i.ID}
}
