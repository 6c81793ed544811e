package store

import (
	"context"
	"fmt"

	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

// SCAIssue is a software composition analysis finding: a vulnerable
// dependency and whether the vulnerable code is reachable. Its JSON form is
// the API's SCA issue.
type SCAIssue struct {
	Key            `json:"-"`
	OffsetKeys     `json:"-"`
	GSI1PK         string          `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK         string          `dynamodbav:"GSI1SK,omitempty" json:"-"`
	GSI2PK         string          `dynamodbav:"GSI2PK,omitempty" json:"-"`
	GSI2SK         string          `dynamodbav:"GSI2SK,omitempty" json:"-"`
	ID             string          `dynamodbav:"id" json:"id"` // uuid
	CompanyID      int64           `dynamodbav:"company_id" json:"-"`
	ProjectID      int64           `dynamodbav:"project_id" json:"-"`
	Branch         string          `dynamodbav:"branch,omitempty" json:"branch,omitempty"`
	Tool           string          `dynamodbav:"tool,omitempty" json:"tool,omitempty"`
	ScanID         string          `dynamodbav:"scan_id,omitempty" json:"scan_id,omitempty"` // first reported by
	IDs            []string        `dynamodbav:"ids,omitempty" json:"ids,omitempty"`         // advisory ids: OSV, GHSA, CVE
	CreatedAt      string          `dynamodbav:"created_at" json:"created_at"`
	Description    string          `dynamodbav:"description" json:"description"`
	Details        string          `dynamodbav:"details" json:"details"`
	Severity       string          `dynamodbav:"severity" json:"severity"`
	CVSSScore      float64         `dynamodbav:"cvss_score" json:"cvss_score"`
	Classification string          `dynamodbav:"classification" json:"classification"`
	CVE            string          `dynamodbav:"cve" json:"cve"`
	Package        SCAPackage      `dynamodbav:"package" json:"package"`
	Location       SCALocation     `dynamodbav:"location" json:"location"`
	Reachability   SCAReachability `dynamodbav:"reachability" json:"reachability"`
	Status         string          `dynamodbav:"status" json:"status"`
	// CWE is the weakness the report names (CycloneDX's cwes; 0: none),
	// for triage rules.
	CWE int `dynamodbav:"cwe,omitempty" json:"-"`
	// Reason and TriageRuleID are the reason and the rule of the status a
	// triage rule gave (scatriage.go); shown by the API's view.
	Reason       string `dynamodbav:"reason,omitempty" json:"-"`
	TriageRuleID string `dynamodbav:"triage_rule_id,omitempty" json:"-"`
	// What the exploitability feeds say of its CVE (store/exploits).
	exploits.Enrichment
}

// SCAPackage is the vulnerable dependency.
type SCAPackage struct {
	Name       string `dynamodbav:"name" json:"name"`
	Version    string `dynamodbav:"version" json:"version"`
	Ecosystem  string `dynamodbav:"ecosystem" json:"ecosystem"`
	FixVersion string `dynamodbav:"fix_version" json:"fix_version"`
}

// SCALocation is the manifest that declares the dependency.
type SCALocation struct {
	Path string `dynamodbav:"path" json:"path"`
}

// SCAReachability tells whether the vulnerable code is reachable and from
// where it is used.
type SCAReachability struct {
	// IsReachable is true when a call path reaches the vulnerable code.
	IsReachable bool       `dynamodbav:"is_reachable" json:"is_reachable"`
	Status      string     `dynamodbav:"status" json:"status"`
	Description string     `dynamodbav:"description" json:"description"`
	Usages      []SCAUsage `dynamodbav:"usages" json:"usages"`
}

// SCAUsage is one place the dependency is used.
type SCAUsage struct {
	ID                  string `dynamodbav:"id" json:"id"` // uuid
	Filename            string `dynamodbav:"filename" json:"filename"`
	CodeLine            string `dynamodbav:"code_line" json:"code_line"`
	IsFunctionReachable string `dynamodbav:"is_function_reachable" json:"is_function_reachable"`
	Reasoning           string `dynamodbav:"reasoning" json:"reasoning"`
}

func scaKey(companyID int64, id string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "SCA#" + id}
}

// PutSCAIssue stores an SCA finding of a company (replacing one with the
// same id) and counts it. An empty ID gets a random uuid, an empty
// CreatedAt now.
func (s *Store) PutSCAIssue(ctx context.Context, companyID int64, i SCAIssue) (SCAIssue, error) {
	if i.ID == "" {
		i.ID = uuid.NewString()
	}
	id, ok := CanonicalUUID(i.ID)
	if !ok {
		return SCAIssue{}, fmt.Errorf("SCA issue id %q: %w", i.ID, ErrInvalid)
	}
	if i.CreatedAt == "" {
		i.CreatedAt = s.t.Stamp()
	}
	if i.Reachability.Usages == nil {
		i.Reachability.Usages = []SCAUsage{}
	}
	i.ID, i.CompanyID = id, companyID
	i.setKeys()
	current, imported, err := s.Lookup(ctx, []string{i.CVE})
	if err != nil {
		return SCAIssue{}, err
	}
	i.Enrichment = exploits.Refresh(i.Enrichment, current[i.CVE], imported)
	items := append([]countedItem{{Key: i.Key,
		Build: func(map[string]types.AttributeValue) (any, []counterRef, error) { return i, scaCounts(i), nil }}}, scaExploitItems(i)...)
	err = s.putCounted(ctx, countJournalPK(companyID, "SCA#"+id), items)
	return i, err
}

// GetSCAIssue reads an SCA finding of a company; an id that is not a uuid is
// ErrNotFound like any unknown id.
func (s *Store) GetSCAIssue(ctx context.Context, companyID int64, id string) (SCAIssue, error) {
	cid, ok := CanonicalUUID(id)
	if !ok {
		return SCAIssue{}, ErrNotFound
	}
	var i SCAIssue
	err := s.t.GetItem(ctx, scaKey(companyID, cid), &i)
	return i, err
}

// setKeys sets the item's key and its list keys: the project's SCA issues
// (GSI1) and the company's (GSI2, with its Offset keys), by id.
func (i *SCAIssue) setKeys() {
	i.Key = scaKey(i.CompanyID, i.ID)
	i.GSI1PK, i.GSI1SK = scaProjectPK(i.CompanyID, i.ProjectID), i.ID
	i.GSI2PK, i.GSI2SK = scaCompanyPK(i.CompanyID), i.ID
	i.OffsetKeys = OffsetKeys{OffsetPK: scaList(i.CompanyID, 0).OffsetPartition, OffsetSK: i.ID}
}
