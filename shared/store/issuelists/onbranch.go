package issuelists

import (
	"context"

	"github.com/acme/codescan-api/shared/store/findings"
)

// OpenOnBranch reports, for each issue, whether its finding (same tool and
// fingerprint) is an open issue on another branch of its project, by id:
// the only_new test against the project's default branch. It reads the
// counterparts by key, 100 at a time.
func (x *Lists) OpenOnBranch(ctx context.Context, companyID int64, branch string, issues []findings.Issue) (map[string]bool, error) {
	ids := make([]string, len(issues))
	for n, i := range issues {
		ids[n] = findings.IssueID(companyID, i.ProjectID, branch, i.Tool, i.Fingerprint)
	}
	out := make(map[string]bool, len(issues))
	for start := 0; start < len(ids); start += 100 {
		got, err := findings.ByID(ctx, x.f, companyID, ids[start:min(start+100, len(ids))])
		if err != nil {
			return nil, err
		}
		for n := start; n < min(start+100, len(ids)); n++ {
			if i, ok := got[ids[n]]; ok && i.Status == "open" {
				out[issues[n].ID] = true
			}
		}
	}
	return out, nil
}
