package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// SCA findings keep one identity per (project, branch, tool, advisory,
// package, version) like SAST issues (ids from IssueID): a scan that
// reports one again keeps its id, first detection (created_at) and
// status. A scan's SCA findings are kept as membership items, one per
// finding (a scan has few). They are listed by id: the company's (GSI2;
// page numbers by the Offset index), a project's (GSI1) and a scan's (its
// membership items), and counted on write (internal/counted): COUNT#SCA,
// COUNT#SCA#P<project> and COUNT#SCANSCA#<scan>.

// member is one SCA finding a scan reported.
type member struct {
	Key
	IssueID string `dynamodbav:"issue_id"`
}

func scaMemberPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#SCANSCA#%s", schema.CompanyPK(companyID), scanID)
}

func scaCompanyPK(companyID int64) string { return schema.CompanyPK(companyID) + "#SCA" }

func scaProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#SCAP#%d", schema.CompanyPK(companyID), projectID)
}

func scaCount(projectID int64) string {
	if projectID == 0 {
		return "SCA"
	}
	return fmt.Sprintf("SCA#P%012d", projectID)
}

func scanSCACount(scanID string) string { return "SCANSCA#" + scanID }

// scaCounts are the counters an SCA finding counts in.
func scaCounts(i SCAIssue) []counterRef {
	return []counterRef{{Key: schema.CountKey(i.CompanyID, scaCount(0))}, {Key: schema.CountKey(i.CompanyID, scaCount(i.ProjectID))}}
}

// PutScanSCAIssues stores the SCA findings of a scan of the company (ids
// set by the caller) and records them as the scan's. A new finding, or an
// open one reported again, takes the status of the active triage rule
// that applies to it (scaRule); any other keeps its stored status.
func (s *Store) PutScanSCAIssues(ctx context.Context, companyID int64, sc Scan, found []SCAIssue) error {
	items := make([]countedItem, 0, 2*len(found))
	scanCounter := []counterRef{{Key: schema.CountKey(companyID, scanSCACount(sc.ID))}}
	current, imported, err := s.scaExploits(ctx, found)
	if err != nil {
		return err
	}
	rules, err := s.ActiveTriageRules(ctx, companyID, sc.ProjectID)
	if err != nil {
		return err
	}
	for n := range found {
		id, ok := CanonicalUUID(found[n].ID)
		if !ok {
			return fmt.Errorf("SCA issue id %q: %w", found[n].ID, ErrInvalid)
		}
		i := found[n]
		i.ID, i.CompanyID, i.ScanID = id, companyID, sc.ID
		i.CreatedAt, i.Status = sc.CreatedAt, "open"
		if i.Reachability.Usages == nil {
			i.Reachability.Usages = []SCAUsage{}
		}
		i.setKeys()
		i.Enrichment = exploits.Refresh(exploits.Enrichment{}, current[i.CVE], imported)
		items = append(items, countedItem{Key: i.Key, Build: func(old map[string]types.AttributeValue) (any, []counterRef, error) {
			j := i
			if old != nil {
				var prev SCAIssue
				if err := attributevalue.UnmarshalMap(old, &prev); err != nil {
					return nil, nil, err
				}
				j.CreatedAt, j.Status, j.ScanID = prev.CreatedAt, prev.Status, prev.ScanID
				j.Reason, j.TriageRuleID = prev.Reason, prev.TriageRuleID
				j.Enrichment = exploits.Refresh(prev.Enrichment, current[i.CVE], imported)
			}
			if j.Status == "open" {
				if r, ok := scaRule(rules, j); ok {
					j = ruledSCA(j, r)
				}
			}
			return j, scaCounts(j), nil
		}})
		items = append(items, scaExploitItems(i)...)
		m := member{Key: Key{PK: scaMemberPK(companyID, sc.ID), SK: i.ID}, IssueID: i.ID}
		items = append(items, countedItem{Key: m.Key, Build: func(map[string]types.AttributeValue) (any, []counterRef, error) {
			return m, scanCounter, nil
		}})
	}
	return s.putCounted(ctx, countJournalPK(companyID, sc.ID), items)
}

// ScanSCAIssues reads one page of a scan's SCA findings (by id) and their
// number.
func (s *Store) ScanSCAIssues(ctx context.Context, companyID int64, scanID string, q PageQuery) ([]SCAIssue, PageResult, int, error) {
	var ms []member
	res, total, err := s.countedPage(ctx, companyID, page.List{Partition: scaMemberPK(companyID, scanID), Forward: true}, q, &ms, scanSCACount(scanID))
	if err != nil {
		return nil, PageResult{}, 0, err
	}
	ids := make([]string, len(ms))
	for n, m := range ms {
		ids[n] = m.IssueID
	}
	out, err := s.scaIssuesByID(ctx, companyID, ids)
	return out, res, total, err
}

// scaIssuesByID reads SCA findings by id, in the order of ids (those gone
// meanwhile left out): a page of list entries' findings.
func (s *Store) scaIssuesByID(ctx context.Context, companyID int64, ids []string) ([]SCAIssue, error) {
	keys := make([]Key, len(ids))
	for n, id := range ids {
		keys[n] = scaKey(companyID, id)
	}
	got, err := s.t.ReadBatch(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	out := []SCAIssue{}
	for _, k := range keys {
		if av, ok := got[k]; ok {
			var i SCAIssue
			if err := attributevalue.UnmarshalMap(av, &i); err != nil {
				return nil, err
			}
			out = append(out, i)
		}
	}
	return out, nil
}

// scaList is the company's SCA findings (projectID 0) or a project's.
func scaList(companyID, projectID int64) page.List {
	if projectID == 0 {
		return page.List{Index: tabledef.GSI2, Partition: scaCompanyPK(companyID), Forward: true, OffsetPartition: scaCompanyPK(companyID)}
	}
	return page.List{Index: tabledef.GSI1, Partition: scaProjectPK(companyID, projectID), Forward: true}
}

// ListSCAIssues reads one page of the SCA findings of a project (0: of the
// whole company), by id, and their number. A project's page by number
// reads the findings before it (the findings' Offset partition is the
// company's list).
func (s *Store) ListSCAIssues(ctx context.Context, companyID, projectID int64, q PageQuery) ([]SCAIssue, PageResult, int, error) {
	out := []SCAIssue{}
	res, total, err := s.countedPage(ctx, companyID, scaList(companyID, projectID), q, &out, scaCount(projectID))
	return out, res, total, err
}
