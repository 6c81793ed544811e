package sca

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// SCA findings keep one identity per (project, branch, package version,
// advisory), whichever scanners report it (correlate.go; ids from
// IssueID of the first source's tool): a scan that reports one again
// keeps its id, first detection (created_at) and status. A scan's SCA findings are kept as membership items, one per
// finding (a scan has few). They are listed by id: the company's (GSI2;
// page numbers by the Offset index), a project's (GSI1) and a scan's (its
// membership items), and counted on write (internal/counted): COUNT#SCA,
// COUNT#SCA#P<project> and COUNT#SCANSCA#<scan>.

// member is one SCA finding a scan reported.
type member struct {
	ddb.Key
	IssueID string `dynamodbav:"issue_id"`
}

// counts are the counters an SCA finding counts in.
func counts(i Issue) []counted.Ref {
	return []counted.Ref{{Key: schema.CountKey(i.CompanyID, schema.SCACount(0))}, {Key: schema.CountKey(i.CompanyID, schema.SCACount(i.ProjectID))}}
}

// PutScanSCAIssues stores the SCA findings of a scan of the company (ids
// set by the caller) and records them as the scan's. A new finding, or an
// open one reported again, takes the status of the active triage rule
// that applies to it (ruleFor); any other keeps its stored status.
func (x *SCA) PutScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, found []Issue) error {
	items := make([]counted.Item, 0, 2*len(found))
	scanCounter := []counted.Ref{{Key: schema.CountKey(companyID, schema.SCAScanCount(sc.ID))}}
	current, imported, err := x.exploitsOf(ctx, found)
	if err != nil {
		return err
	}
	rules, err := x.d.Rules.ActiveTriageRules(ctx, companyID, sc.ProjectID)
	if err != nil {
		return err
	}
	found = slices.Clone(found) // the caller's findings stay as given: ids are canonicalised and correlated on a copy
	for n := range found {
		id, ok := schema.CanonicalUUID(found[n].ID)
		if !ok {
			return fmt.Errorf("SCA issue id %q: %w", found[n].ID, ddb.ErrInvalid)
		}
		found[n].ID, found[n].CompanyID = id, companyID
	}
	if found, err = x.correlate(ctx, companyID, sc, found); err != nil {
		return err
	}
	left, err := x.leftSources(ctx, companyID, sc, found)
	if err != nil {
		return err
	}
	items = append(items, left...)
	for n := range found {
		id, ok := schema.CanonicalUUID(found[n].ID)
		if !ok {
			return fmt.Errorf("SCA issue id %q: %w", found[n].ID, ddb.ErrInvalid)
		}
		i := found[n]
		i.ID, i.CompanyID, i.ScanID = id, companyID, sc.ID
		i.CreatedAt, i.Status = sc.CreatedAt, "open"
		if i.Reachability.Usages == nil {
			i.Reachability.Usages = []Usage{}
		}
		i.setKeys()
		i.Enrichment = exploits.Refresh(exploits.Enrichment{}, current[i.CVE], imported)
		items = append(items, counted.Item{Key: i.Key, Build: func(old map[string]types.AttributeValue) (any, []counted.Ref, error) {
			j := i
			if old != nil {
				var prev Issue
				if err := attributevalue.UnmarshalMap(old, &prev); err != nil {
					return nil, nil, err
				}
				j = merged(prev, i) // first detection, status and other sources kept
				if j.CVE == i.CVE {
					j.Enrichment = exploits.Refresh(prev.Enrichment, current[i.CVE], imported)
				}
			}
			if j.Status == "open" {
				if r, ok := ruleFor(rules, j); ok {
					j = ruled(j, r)
				}
			}
			return j, counts(j), nil
		}})
		items = append(items, exploitItems(i)...)
		m := member{Key: ddb.Key{PK: schema.SCAMemberPK(companyID, sc.ID), SK: i.ID}, IssueID: i.ID}
		items = append(items, counted.Item{Key: m.Key, Build: func(map[string]types.AttributeValue) (any, []counted.Ref, error) {
			return m, scanCounter, nil
		}})
	}
	return counted.Put(ctx, x.t, schema.CountJournalPK(companyID, sc.ID), items)
}

// ListScanSCAIssues reads one page of a scan's SCA findings (by id) and
// their number.
func (x *SCA) ListScanSCAIssues(ctx context.Context, companyID int64, scanID string, q page.Request) (page.Page[Issue], error) {
	ms, err := counted.Page[member](ctx, x.t, x.l, companyID, page.List{Partition: schema.SCAMemberPK(companyID, scanID), Forward: true}, q, schema.SCAScanCount(scanID))
	if err != nil {
		return page.Page[Issue]{}, err
	}
	return x.pageByID(ctx, companyID, page.Map(ms, func(m member) string { return m.IssueID }))
}

// pageByID is the page of the findings whose ids p holds (those gone
// meanwhile left out).
func (x *SCA) pageByID(ctx context.Context, companyID int64, p page.Page[string]) (page.Page[Issue], error) {
	out, err := x.byID(ctx, companyID, p.Items)
	if err != nil {
		return page.Page[Issue]{}, err
	}
	return page.Page[Issue]{Items: out, Offset: p.Offset, Next: p.Next, Total: p.Total}, nil
}

// byID reads SCA findings by id, in the order of ids (those gone
// meanwhile left out): a page of list entries' findings.
func (x *SCA) byID(ctx context.Context, companyID int64, ids []string) ([]Issue, error) {
	keys := make([]ddb.Key, len(ids))
	for n, id := range ids {
		keys[n] = schema.SCAIssueKey(companyID, id)
	}
	got, err := x.t.ReadBatch(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	out := []Issue{}
	for _, k := range keys {
		if av, ok := got[k]; ok {
			var i Issue
			if err := attributevalue.UnmarshalMap(av, &i); err != nil {
				return nil, err
			}
			out = append(out, i)
		}
	}
	return out, nil
}

// list is the company's SCA findings (projectID 0) or a project's.
func list(companyID, projectID int64) page.List {
	if projectID == 0 {
		return page.List{Index: tabledef.GSI2, Partition: schema.SCACompanyPK(companyID), Forward: true, OffsetPartition: schema.SCACompanyPK(companyID)}
	}
	return page.List{Index: tabledef.GSI1, Partition: schema.SCAProjectPK(companyID, projectID), Forward: true}
}

// ListSCAIssues reads one page of the SCA findings of a project (0: of the
// whole company), by id, and their number. A project's page by number
// reads the findings before it (the findings' Offset partition is the
// company's list).
func (x *SCA) ListSCAIssues(ctx context.Context, companyID, projectID int64, q page.Request) (page.Page[Issue], error) {
	return counted.Page[Issue](ctx, x.t, x.l, companyID, list(companyID, projectID), q, schema.SCACount(projectID))
}
