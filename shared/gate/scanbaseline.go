package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/acme/codescan-api/shared/store"
)

// Source is what comparing a scan with its baseline reads; the store
// satisfies it.
type Source interface {
	FirstScanBranch(ctx context.Context, companyID, projectID int64) (string, error)
	ListScans(ctx context.Context, companyID int64, q store.ScanQuery) (store.ScanPage, error)
	BaselineOpen(ctx context.Context, companyID, projectID int64, branch, tool string, fingerprints []string) (store.BaselineOpen, error)
}

// UnknownBaselineError is a requested baseline branch the project has no
// scan of (a 400 naming baseline).
type UnknownBaselineError struct{ Branch string }

func (e *UnknownBaselineError) Error() string {
	return fmt.Sprintf("baseline: the project has no scan of branch %q", e.Branch)
}

// BaselineBranch is the branch a scan is compared with: requested when
// given (nil when absent: a pull request's base branch when the project
// has a scan of it, else the project's default branch, from its settings
// or, without one, the branch of its first scan, as the project's
// default_branch shows it; "" for none); "" when there is none. A
// requested branch the project has no scan of is an *UnknownBaselineError.
func BaselineBranch(ctx context.Context, src Source, sc store.Scan, proj store.Project, requested *string) (string, error) {
	if base := PullRequestBase(sc); requested == nil && base != "" {
		scanned, err := hasScan(ctx, src, sc, proj, base)
		if err != nil || scanned {
			return base, err
		}
	}
	switch {
	case requested != nil && (*requested == "" || *requested == sc.Branch):
		return *requested, nil
	case requested != nil:
		scanned, err := hasScan(ctx, src, sc, proj, *requested)
		if err != nil {
			return "", err
		}
		if !scanned {
			return "", &UnknownBaselineError{Branch: *requested}
		}
		return *requested, nil
	case proj.DefaultBranch != "":
		return proj.DefaultBranch, nil
	}
	b, err := src.FirstScanBranch(ctx, sc.CompanyID, proj.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return b, err
}

// PullRequestBase is the base branch of the pull request a scan built, when it
// is another branch.
func PullRequestBase(sc store.Scan) string {
	if sc.PullRequest == nil || sc.PullRequest.BaseBranch == sc.Branch {
		return ""
	}
	return sc.PullRequest.BaseBranch
}

// hasScan reports whether the project has a scan of branch.
func hasScan(ctx context.Context, src Source, sc store.Scan, proj store.Project, branch string) (bool, error) {
	page, err := src.ListScans(ctx, sc.CompanyID, store.ScanQuery{ProjectID: proj.ID, Branch: branch, Page: store.PageQuery{Limit: 1}})
	return len(page.Scans) > 0, err
}

// CompareScan compares a scan's issues with branch (see Compare); the
// baseline's open findings are read only for the scan's tool and the
// issues given, and not at all on the baseline branch itself.
func CompareScan(ctx context.Context, src Source, sc store.Scan, branch string, issues []store.Issue) (Comparison[store.Issue], error) {
	b := Baseline{Branch: branch}
	if branch != sc.Branch {
		fps := make([]string, len(issues))
		for n, i := range issues {
			fps[n] = i.Fingerprint
		}
		open, err := src.BaselineOpen(ctx, sc.CompanyID, sc.ProjectID, branch, sc.Tool, fps)
		if err != nil {
			return Comparison[store.Issue]{}, err
		}
		b.ScanID, b.Open = open.ScanID, map[Identity]bool{}
		for fp := range open.Fingerprints {
			b.Open[Identity{Tool: sc.Tool, Fingerprint: fp}] = true
		}
	}
	return Compare(b, sc.Branch, issues, func(i store.Issue) Identity { return Identity{Tool: i.Tool, Fingerprint: i.Fingerprint} }), nil
}
