package issuelists

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
)

// listAccepted is ListIssues for a filter with AcceptedBefore: the
// company's accepted risks ending before it, soonest end first, that the
// rest of f matches. It reads the expiry partition's range (by key) and
// those issues, so its cost grows with the acceptances ending before the
// date, never with the company's other issues; it pages by number only.
func (x *Lists) listAccepted(ctx context.Context, companyID int64, f IssueFilter, q page.Request) (page.Page[findings.Issue], error) {
	if q.Token != "" {
		return page.Page[findings.Issue]{}, page.ErrBadToken
	}
	var all []findings.Issue
	err := x.acceptances.EachEndingBefore(ctx, companyID, f.AcceptedBefore, func(keys []ddb.Key) error {
		return x.eachRead(ctx, keys, func(i findings.Issue) error {
			if f.acceptedMatch(i) {
				all = append(all, i)
			}
			return nil
		})
	})
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	return pageByNumber(all, q), nil
}

// pageByNumber is the page q (by number) of all, every match of a list
// read whole, counted.
func pageByNumber[T any](all []T, q page.Request) page.Page[T] {
	from := min(q.Offset, len(all))
	items := append([]T{}, all[from:min(from+max(q.Limit, 0), len(all))]...)
	return page.Page[T]{Items: items, Offset: q.Offset}.Counted(int64(len(all)))
}

// acceptedMatch reports whether i, read by its key in the expiry partition
// (eventually consistent: it may have changed since), is an accepted risk
// ending before f.AcceptedBefore that the rest of f matches.
func (f IssueFilter) acceptedMatch(i findings.Issue) bool {
	end, err := i.Expires()
	switch {
	case i.Status != "accepted_risk" || err != nil || !end.Before(f.AcceptedBefore),
		f.Status != "" && f.Status != i.Status,
		f.Urgency != "" && f.Urgency != i.Urgency,
		f.CWE != nil && *f.CWE != i.CWE,
		f.FilePath != "" && f.FilePath != i.FilePath:
		return false
	}
	if len(f.Scopes) == 0 {
		return true
	}
	for _, sc := range f.Scopes {
		if sc.ProjectID == 0 || sc.ProjectID == i.ProjectID && (sc.Branch == "" || sc.Branch == i.Branch) {
			return true
		}
	}
	return false
}
