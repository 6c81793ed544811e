package sca

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// One finding per vulnerability. Scanners name one advisory by several
// ids: govulncheck reports GO-2021-0053, OSV-Scanner the same entry with
// its aliases CVE-2021-3121 and GHSA-c3h9-896r-86jm, a CycloneDX report
// the CVE with the GHSA in its references. An SCA finding is one
// vulnerable package version and one advisory on a project's branch,
// whichever scanners report it: one item, counted once, one first
// detection (one SLA clock), with the scanners that report it as its
// sources (tool and the advisory id it used).
//
// The key. A finding keeps the id it was created with (IssueID of its
// first source's tool and advisory, the id of the time before
// correlation, so findings stored then keep theirs). Every advisory id it
// answers to has an alias item (schema.SCAAliasKey: project branch,
// package version, the id) naming it, written with the finding. A scan's
// finding is looked up by all its ids at once, before it is written: a
// hit is the finding it is; without one it is new, and its alias items
// are claimed in one conditional transaction (each absent, or already
// naming it), so two scanners writing the same new vulnerability at once
// make one finding (the loser reads the winner's claim and joins it).
// Choosing a "canonical" advisory (CVE before GHSA before the tool's id)
// as the key would change the key when a later source brings the CVE the
// first did not know; an alias index never moves a finding: a new alias
// joins the finding it is found with, and is claimed for it. Two findings
// that a later report shows to be one advisory (each source knowing a
// different id, a third naming both) stay two: the later report joins
// the first it finds.
//
// A source that stops reporting it: when a tool's scan of the branch (its
// upload category's, see scans.Scan.Category) no longer reports a
// finding the tool's previous scan there reported, the tool leaves its
// sources; the others stay.

// Source is one scanner reporting a finding: its tool and the advisory
// id it reports it under.
type Source struct {
	Tool       string `dynamodbav:"tool" json:"tool"`
	AdvisoryID string `dynamodbav:"advisory_id" json:"advisory_id"`
}

// alias is one advisory id of a finding.
type alias struct {
	ddb.Key
	IssueID string `dynamodbav:"issue_id"`
}

// advisories are the ids a finding answers to: its ids, its
// classification and its CVE, once each (upper case).
func advisories(i Issue) []string {
	var out []string
	for _, id := range append(append([]string{i.Classification, i.CVE}, i.IDs...), sourceIDs(i.Sources)...) {
		if id = strings.ToUpper(strings.TrimSpace(id)); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func sourceIDs(ss []Source) []string {
	out := make([]string, len(ss))
	for n, s := range ss {
		out[n] = s.AdvisoryID
	}
	return out
}

// version is a package version as the alias keys compare it: a Go module
// version without its "v" (govulncheck writes v1.3.1, OSV-Scanner 1.3.1).
func version(ecosystem, v string) string {
	if strings.EqualFold(ecosystem, "go") {
		return strings.TrimPrefix(v, "v")
	}
	return v
}

func aliasKey(companyID int64, i Issue, advisory string) ddb.Key {
	p := i.Package
	return schema.SCAAliasKey(companyID, i.ProjectID, i.Branch, p.Ecosystem, p.Name, version(p.Ecosystem, p.Version), advisory)
}

// correlate gives each of a scan's findings the id of the finding it is
// (see above), claims the alias items of new ones and adds new aliases of
// known ones, and merges findings of the scan that are one (two entries
// of a report naming one advisory): one per id, in report order.
func (x *SCA) correlate(ctx context.Context, companyID int64, sc scans.Scan, found []Issue) ([]Issue, error) {
	for n := range found {
		found[n].Sources = []Source{{Tool: sc.Tool, AdvisoryID: found[n].Classification}}
	}
	known, err := x.aliases(ctx, companyID, found)
	if err != nil {
		return nil, err
	}
	var out []Issue
	at := map[string]int{}
	for _, i := range found {
		for attempt := 0; ; attempt++ {
			if id := knownID(companyID, i, known); id != "" {
				i.ID = id
			}
			err := x.claim(ctx, companyID, i, known)
			if err == nil {
				break
			}
			if !errors.Is(err, ddb.ErrConflict) || attempt == 2 {
				return nil, err
			}
			// Another writer claimed one of its ids meanwhile: read
			// again and join its finding.
			if known, err = x.aliases(ctx, companyID, []Issue{i}); err != nil {
				return nil, err
			}
		}
		if n, ok := at[i.ID]; ok {
			out[n] = merged(out[n], i)
			continue
		}
		at[i.ID] = len(out)
		out = append(out, i)
	}
	return out, nil
}

// aliases reads the alias items of the findings' ids (consistently: a
// claim just made must be seen), by key.
func (x *SCA) aliases(ctx context.Context, companyID int64, found []Issue) (map[ddb.Key]string, error) {
	var keys []ddb.Key
	seen := map[ddb.Key]bool{}
	for _, i := range found {
		for _, a := range advisories(i) {
			if k := aliasKey(companyID, i, a); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	got, err := x.t.ReadBatch(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	out := map[ddb.Key]string{}
	for k, av := range got {
		var a alias
		if err := attributevalue.UnmarshalMap(av, &a); err != nil {
			return nil, err
		}
		out[k] = a.IssueID
	}
	return out, nil
}

// knownID is the finding an alias of i names ("" for none), the first of
// i's ids that has one deciding.
func knownID(companyID int64, i Issue, known map[ddb.Key]string) string {
	for _, a := range advisories(i) {
		if id := known[aliasKey(companyID, i, a)]; id != "" {
			return id
		}
	}
	return ""
}

// claim writes the alias items i's ids lack, each on the condition that
// it is still absent or names i (ErrConflict when another finding took
// one meanwhile); known learns them. An id that already names another
// finding stays that finding's (see the limits above).
func (x *SCA) claim(ctx context.Context, companyID int64, i Issue, known map[ddb.Key]string) error {
	var items []types.TransactWriteItem
	var keys []ddb.Key
	for _, a := range advisories(i) {
		k := aliasKey(companyID, i, a)
		if known[k] != "" {
			continue
		}
		cond := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(expression.Name("issue_id").Equal(expression.Value(i.ID)))
		item, err := x.t.TxPut(alias{Key: k, IssueID: i.ID}, &cond)
		if err != nil {
			return err
		}
		items, keys = append(items, item), append(keys, k)
	}
	for len(items) > 0 {
		n := min(len(items), ddb.MaxTxItems)
		if err := x.t.Transact(ctx, items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	for _, k := range keys {
		known[k] = i.ID
	}
	return nil
}

// merged is a finding as two of its reports show it: b's view, with a's
// first detection, the ids and sources of both, and the more telling
// reachability (an analysed one over not_analyzed).
func merged(a, b Issue) Issue {
	out := b
	out.CreatedAt, out.ScanID, out.Status, out.Reason, out.TriageRuleID = a.CreatedAt, a.ScanID, a.Status, a.Reason, a.TriageRuleID
	out.Enrichment = a.Enrichment
	if a.Tool != "" {
		out.Tool = a.Tool
	}
	out.Classification = firstOf(a.Classification, b.Classification)
	out.CVE = firstOf(a.CVE, b.CVE)
	out.IDs = union(a.IDs, b.IDs)
	out.Location.Path = firstOf(b.Location.Path, a.Location.Path)
	out.Sources = withSources(a, b.Sources)
	if b.Reachability.Status == notAnalyzed && a.Reachability.Status != "" && a.Reachability.Status != notAnalyzed {
		out.Reachability = a.Reachability
	}
	return out
}

// notAnalyzed is the reachability of a scanner that does not analyse it
// (finding.NotAnalyzed).
const notAnalyzed = "not_analyzed"

// SourceList are the finding's sources: a finding stored before sources
// (nil) has its tool's; an empty list is a finding no scanner reports now.
func (i Issue) SourceList() []Source {
	if i.Sources != nil {
		return i.Sources
	}
	if i.Tool == "" {
		return []Source{}
	}
	return []Source{{Tool: i.Tool, AdvisoryID: i.Classification}}
}

// withSources are a's sources (SourceList) with each of add replacing its
// tool's, by tool; never nil.
func withSources(a Issue, add []Source) []Source {
	out := slices.Clone(a.SourceList())
	if out == nil {
		out = []Source{}
	}
	for _, s := range add {
		out = slices.DeleteFunc(out, func(o Source) bool { return o.Tool == s.Tool })
		out = append(out, s)
	}
	slices.SortFunc(out, func(p, q Source) int { return strings.Compare(p.Tool, q.Tool) })
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// errGone is an SCA finding deleted while a scan took its tool out of
// its sources (its project deleted meanwhile); the scan's write is tried
// again.
var errGone = errors.New("SCA finding deleted while being written")

// leftSources are the writes that take the scan's tool out of the sources
// of the findings its previous scan of the branch (of its upload
// category, or the uncategorised scan a category's first scan takes over)
// reported and this one does not: the tool no longer reports
// them, the other sources stay. A scan older than that previous one
// (uploaded late) takes nothing out.
func (x *SCA) leftSources(ctx context.Context, companyID int64, sc scans.Scan, found []Issue) ([]counted.Item, error) {
	var head struct {
		ScanID        string `dynamodbav:"scan_id"`
		ScanCreatedAt string `dynamodbav:"scan_created_at"`
	}
	err := x.t.GetItemConsistent(ctx, schema.CategoryHeadKey(companyID, sc.ProjectID, sc.Branch, sc.Tool, sc.Category), &head)
	if sc.Category != "" && (errors.Is(err, ddb.ErrNotFound) || (err == nil && head.ScanID == "")) {
		// A category's first scan takes the uncategorised truth over
		// (store/findings categories.go).
		err = x.t.GetItemConsistent(ctx, schema.HeadKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), &head)
	}
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && (head.ScanID == "" || head.ScanID == sc.ID || head.ScanCreatedAt > sc.CreatedAt)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ms []member
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.SCAMemberPK(companyID, head.ScanID), ""), true, &ms); err != nil {
		return nil, err
	}
	reported := map[string]bool{}
	for _, i := range found {
		reported[i.ID] = true
	}
	var gone []string
	for _, m := range ms {
		if !reported[m.IssueID] {
			gone = append(gone, m.IssueID)
		}
	}
	stored, err := x.byID(ctx, companyID, gone)
	if err != nil {
		return nil, err
	}
	var out []counted.Item
	for _, i := range stored {
		if !slices.ContainsFunc(withSources(i, nil), func(s Source) bool { return s.Tool == sc.Tool }) {
			continue
		}
		out = append(out, counted.Item{Key: i.Key, Build: func(old map[string]types.AttributeValue) (any, []counted.Ref, error) {
			if old == nil {
				return nil, nil, errGone
			}
			var prev Issue
			if err := attributevalue.UnmarshalMap(old, &prev); err != nil {
				return nil, nil, err
			}
			// Never nil: an empty list is no scanner reporting it now.
			prev.Sources = slices.DeleteFunc(withSources(prev, nil), func(s Source) bool { return s.Tool == sc.Tool })
			return prev, counts(prev), nil
		}})
	}
	return out, nil
}
