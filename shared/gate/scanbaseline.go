package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Source is what comparing a scan with its baseline reads; the store
// satisfies it.
type Source struct {
	Baselines interface {
		BaselineOpen(ctx context.Context, companyID int64, projectID int64, branch string, tool string, fingerprints []string) (baselines.Open, error)
	}
	Scans interface {
		FirstScanBranch(ctx context.Context, companyID int64, projectID int64) (string, error)
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q storepage.Request) (storepage.Page[scans.Scan], error)
	}
}

// SourceOf is the areas of st that Source touches: its composition.
func SourceOf(st *store.Store) Source {
	return Source{Baselines: st.Baselines, Scans: st.Scans}
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
func BaselineBranch(ctx context.Context, src Source, sc scans.Scan, proj schema.Project, requested *string) (string, error) {
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
	b, err := src.Scans.FirstScanBranch(ctx, sc.CompanyID, proj.ID)
	if errors.Is(err, ddb.ErrNotFound) {
		return "", nil
	}
	return b, err
}

// PullRequestBase is the base branch of the pull request a scan built, when it
// is another branch.
func PullRequestBase(sc scans.Scan) string {
	if sc.PullRequest == nil || sc.PullRequest.BaseBranch == sc.Branch {
		return ""
	}
	return sc.PullRequest.BaseBranch
}

// hasScan reports whether the project has a scan of branch.
func hasScan(ctx context.Context, src Source, sc scans.Scan, proj schema.Project, branch string) (bool, error) {
	page, err := src.Scans.ListScans(ctx, sc.CompanyID, scans.ScanQuery{ProjectID: proj.ID, Branch: branch}, storepage.Request{Limit: 1})
	return len(page.Items) > 0, err
}

// CompareScan compares a scan's issues with branch (see Compare); the
// baseline's open findings are read only for the scan's tool and the
// issues given, and not at all on the baseline branch itself.
func CompareScan(ctx context.Context, src Source, sc scans.Scan, branch string, issues []findings.Issue) (Comparison[findings.Issue], error) {
	b := Baseline{Branch: branch}
	if branch != sc.Branch {
		fps := make([]string, len(issues))
		for n, i := range issues {
			fps[n] = i.Fingerprint
		}
		open, err := src.Baselines.BaselineOpen(ctx, sc.CompanyID, sc.ProjectID, branch, sc.Tool, fps)
		if err != nil {
			return Comparison[findings.Issue]{}, err
		}
		b.ScanID, b.Open = open.ScanID, map[Identity]bool{}
		for fp := range open.Fingerprints {
			b.Open[Identity{Tool: sc.Tool, Fingerprint: fp}] = true
		}
	}
	return Compare(b, sc.Branch, issues, func(i findings.Issue) Identity { return Identity{Tool: i.Tool, Fingerprint: i.Fingerprint} }), nil
}
