package issuelists

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
)

// The ticket filters of the issue list (has_ticket, ticket_state) are
// answered from the ticket links' own items (shared/store/tickets): a
// link holds its ticket's state and the ids of the issues it lists in one
// item, written together, so the set of issues with a ticket (of a state)
// is exactly what the links say at the time of the read. The issue items
// carry no ticket mark, so no issue write is needed when a ticket is
// opened, closed or reopened. The two reads below take that set.

// MaxTicketWalk bounds how far ListIssuesWithout walks the unfiltered
// list (offset plus page): past it the request is refused.
const MaxTicketWalk = 10_000

// ListIssuesAmong reads one page (by number) of the issues among ids that
// f matches, and how many match: project, branch, newest first, issue id.
// Its cost grows with len(ids), never with the company's other issues.
func (x *Lists) ListIssuesAmong(ctx context.Context, companyID int64, f IssueFilter, ids []string, q page.Request) (page.Page[findings.Issue], error) {
	if q.Token != "" {
		return page.Page[findings.Issue]{}, page.ErrBadToken
	}
	var all []findings.Issue
	for start := 0; start < len(ids); start += 100 {
		got, err := findings.ByID(ctx, x.f, companyID, ids[start:min(start+100, len(ids))])
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		for _, i := range got {
			if f.Matches(i) {
				all = append(all, i)
			}
		}
	}
	slices.SortFunc(all, func(a, b findings.Issue) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), strings.Compare(a.Branch, b.Branch),
			strings.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return pageByNumber(all, q), nil
}

// ListIssuesWithout reads one page (by number) of the issues f matches
// that are not in without, in ListIssues' order, and how many there are:
// ListIssues' total less the issues of without that f matches. It walks
// ListIssues' pages up to the page asked (at most MaxTicketWalk issues).
func (x *Lists) ListIssuesWithout(ctx context.Context, companyID int64, f IssueFilter, without map[string]bool, q page.Request) (page.Page[findings.Issue], error) {
	if q.Token != "" || q.Offset+q.Limit > MaxTicketWalk {
		return page.Page[findings.Issue]{}, page.ErrBadToken
	}
	ids := make([]string, 0, len(without))
	for id := range without {
		ids = append(ids, id)
	}
	excluded, err := x.ListIssuesAmong(ctx, companyID, f, ids, page.Request{Limit: 0})
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	out := []findings.Issue{}
	skip, total := q.Offset, int64(-1)
	for offset := 0; len(out) < q.Limit && offset < MaxTicketWalk; offset += 100 {
		got, err := x.ListIssues(ctx, companyID, f, page.Request{Offset: offset, Limit: 100})
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		total = got.Count()
		for _, i := range got.Items {
			switch {
			case without[i.ID]:
			case skip > 0:
				skip--
			case len(out) < q.Limit:
				out = append(out, i)
			}
		}
		if len(got.Items) < 100 {
			break
		}
	}
	if total < 0 {
		first, err := x.ListIssues(ctx, companyID, f, page.Request{Limit: 1})
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		total = first.Count()
	}
	return page.Page[findings.Issue]{Items: out, Offset: q.Offset}.Counted(total - excluded.Count()), nil
}

// Matches reports whether f takes issue i (read by key: every member of f
// is checked on the item itself).
func (f IssueFilter) Matches(i findings.Issue) bool {
	if !f.AcceptedBefore.IsZero() {
		return f.acceptedMatch(i)
	}
	switch {
	case f.Status != "" && f.Status != i.Status,
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
