package prtriage

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	storescans "github.com/acme/codescan-api/shared/store/scans"
)

// Bounds of the look-up of a reference: how far back a project's scans
// are read to find the pull request's, and how many scans of its branch
// are read for the latest of each tool. A pull request's scans are among
// its project's newest; older ones were summarized long ago.
const (
	scanPage     = 100
	maxScanPages = 2
)

// errEnough stops reading issues once a reference is known to be
// ambiguous.
var errEnough = errors.New("enough matches")

// resolve finds the one finding of the pull request's summaries whose id
// starts with the command's reference: among the issues of the pull
// request's latest complete scan of each tool, in every project whose
// summary the integration keeps on the pull request.
func (t *Triager) resolve(ctx context.Context, req Request) (findings.Issue, Outcome, error) {
	ref := req.Command.Ref
	projects, err := t.Store.Catalog.PRProjects(ctx, req.CompanyID, req.Integration, req.Repo, strconv.Itoa(req.Number))
	if err != nil {
		return findings.Issue{}, Outcome{}, err
	}
	found := map[string]findings.Issue{}
	for _, p := range projects {
		if len(found) > 1 {
			break
		}
		scans, err := t.prScans(ctx, req, p)
		if err != nil {
			return findings.Issue{}, Outcome{}, err
		}
		for _, sc := range scans {
			if len(found) > 1 {
				break
			}
			err := t.Store.Lists.EachScanIssue(ctx, req.CompanyID, sc.ID, func(i findings.Issue) error {
				if strings.HasPrefix(i.ID, ref) {
					found[i.ID] = i
				}
				if len(found) > 1 {
					return errEnough
				}
				return nil
			})
			if err != nil && !errors.Is(err, errEnough) {
				return findings.Issue{}, Outcome{}, err
			}
		}
	}
	switch len(found) {
	case 0:
		return findings.Issue{}, refused("no finding of this pull request's Codescan summary has the reference `%s`.", ref), nil
	case 1:
		for _, i := range found {
			return i, Outcome{}, nil
		}
	}
	return findings.Issue{}, refused("the reference `%s` names more than one finding; give more characters of its issue id.", ref), nil
}

// prScans are the pull request's latest complete scan of each tool in a
// project: the project's newest scan that built the pull request names its
// branch, whose newest scans are then read.
func (t *Triager) prScans(ctx context.Context, req Request, projectID int64) ([]storescans.Scan, error) {
	q := page.Request{Limit: scanPage}
	branch := ""
	for n := 0; n < maxScanPages && branch == ""; n++ {
		p, err := t.Store.Scans.ListScans(ctx, req.CompanyID, storescans.ScanQuery{ProjectID: projectID}, q)
		if err != nil {
			return nil, err
		}
		for _, sc := range p.Items {
			if built(sc, req) {
				branch = sc.Branch
				break
			}
		}
		if p.Next == "" {
			break
		}
		q.Token = p.Next
	}
	if branch == "" {
		return nil, nil
	}
	p, err := t.Store.Scans.ListScans(ctx, req.CompanyID, storescans.ScanQuery{ProjectID: projectID, Branch: branch}, page.Request{Limit: scanPage})
	if err != nil {
		return nil, err
	}
	var out []storescans.Scan
	tools := map[string]bool{}
	for _, sc := range p.Items { // newest first
		if built(sc, req) && !tools[sc.Tool] {
			tools[sc.Tool] = true
			out = append(out, sc)
		}
	}
	return out, nil
}

// built reports whether a complete scan built the request's pull request.
func built(sc storescans.Scan, req Request) bool {
	pr := sc.PullRequest
	complete := sc.Status == storescans.ScanComplete || sc.Status == "" // scans from before statuses were complete
	return complete && pr != nil && pr.Provider == req.provider() && strings.EqualFold(pr.Host, req.Host) &&
		strings.EqualFold(pr.Repo, req.Repo) && pr.Number == strconv.Itoa(req.Number)
}
