package findings

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Upload categories. A scan is the truth for its tool and category on its
// branch: its head (the last scan applied) is the category's own
// (schema.CategoryHeadKey; the empty category's is the head of the time
// before categories, so data written then keeps working unchanged), and
// it fixes only what the previous scan of its category reported.
//
// An issue's identity does not name the category (IssueID: company,
// project, branch, tool, fingerprint): two categories reporting the same
// finding (overlapping directories) show one issue, as GitHub shows one
// alert found by several configurations, counted once. It is fixed only
// when no category's latest scan reports it: a category that stops
// reporting it leaves it open while another's latest scan still does.
//
// Taking categories up. A branch scanned without a category before (the
// scanner's reports gained a runAutomationDetails.id, as CodeQL's
// "/language:go/", or its jobs started naming one) would otherwise keep
// the uncategorised scan's open findings open for ever: no category's
// scan may fix them. So the first scan of a category on a branch whose
// uncategorised head names a scan takes that truth over: what it may fix
// is what that scan reported (less what other categories' latest scans
// report), and, applied, it empties the uncategorised head, so that the
// next categories start from their own scans and a later uncategorised
// upload starts afresh.
//
// The scans of every category of a tool on a branch are applied one at a
// time under the one lease of the tool's head (the empty category's item
// holds the lease and the journal, as before): the other categories'
// heads cannot move while a scan decides what it fixes.

// categoryHeadKey is the head of the scan's tool and category.
func categoryHeadKey(companyID int64, sc scans.Scan) ddb.Key {
	return schema.CategoryHeadKey(companyID, sc.ProjectID, sc.Branch, sc.Tool, sc.Category)
}

// categoryState is the lease holder's view of the head: the lease item
// (its journal; it existed before this lease or not) with the scan id and
// time of the scan's category's head, or of the uncategorised head it
// takes over (adopted).
func (x *Findings) categoryState(ctx context.Context, companyID int64, sc scans.Scan, head ScanHead) (ScanHead, error) {
	if sc.Category == "" {
		return head, nil
	}
	var c ScanHead
	if err := x.t.GetItemConsistent(ctx, categoryHeadKey(companyID, sc), &c); err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return head, err
	}
	if c.ScanID == "" && head.ScanID != "" {
		head.adopted = true
		return head, nil
	}
	head.ScanID, head.ScanCreatedAt = c.ScanID, c.ScanCreatedAt
	return head, nil
}

// ownTruth is, of the previous scan's issues of the category (previous),
// those this scan may fix: all but those another category's latest scan
// of the tool on the branch reports. Without a candidate to fix (all
// reported again) nothing is read; without categories the heads' query
// finds the scan's own head only.
func (x *Findings) ownTruth(ctx context.Context, companyID int64, sc scans.Scan, head ScanHead, previous []string, found []Issue) ([]string, error) {
	reported := map[string]bool{}
	for _, f := range found {
		reported[f.ID] = true
	}
	candidates := map[string]bool{}
	for _, id := range previous {
		if !reported[id] {
			candidates[id] = true
		}
	}
	if len(candidates) == 0 {
		return previous, nil
	}
	elsewhere, err := x.reportedElsewhere(ctx, companyID, sc, head.adopted, candidates)
	if err != nil || len(elsewhere) == 0 {
		return previous, err
	}
	out := make([]string, 0, len(previous))
	for _, id := range previous {
		if !elsewhere[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// reportedElsewhere are those of ids the latest scan of another category
// of the scan's tool on its branch reports (by either of a finding's ids,
// see aliases.go); the uncategorised head the scan adopted is its own.
func (x *Findings) reportedElsewhere(ctx context.Context, companyID int64, sc scans.Scan, adopted bool, ids map[string]bool) (map[string]bool, error) {
	base := schema.HeadKey(companyID, sc.ProjectID, sc.Branch, sc.Tool)
	own := categoryHeadKey(companyID, sc)
	var heads []ScanHead
	if err := x.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(base.PK, base.SK), &heads); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, h := range heads {
		if h.SK == own.SK || h.ScanID == "" || (adopted && h.SK == base.SK) {
			continue
		}
		members, aliases, err := scans.Members(ctx, x.t, companyID, h.ScanID)
		if err != nil {
			return nil, err
		}
		for _, id := range members {
			for _, k := range []string{id, aliases[id]} {
				if ids[k] {
					out[k] = true
				}
			}
		}
	}
	return out, nil
}

// txCategoryHead moves the head of the scan's category to it (the lease
// stays on the tool's head, whose transaction condition guards this one).
func (x *Findings) txCategoryHead(companyID int64, sc scans.Scan) (types.TransactWriteItem, error) {
	upd := expression.Set(expression.Name("scan_id"), expression.Value(sc.ID)).
		Set(expression.Name("scan_created_at"), expression.Value(sc.CreatedAt)).
		Set(expression.Name("category"), expression.Value(sc.Category))
	return x.t.TxUpdate(categoryHeadKey(companyID, sc), upd, nil)
}
