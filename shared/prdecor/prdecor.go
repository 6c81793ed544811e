// Package prdecor puts a pull-request scan's findings where the developer
// decides: on the pull request (GitHub) or merge request (GitLab). Through the company's source-code-host
// integration whose host and org allow-list match the repository, it sets
// a commit status on the pull request's head commit (the verdict of the
// company's CI blocking rules on what the pull request adds to its base
// branch), read from the host, keeps one summary comment, found again by
// a hidden marker and a link item, edited in place on every later scan,
// and, when the integration enables them, comments inline on the new
// findings that sit on lines the pull request adds, each once.
//
// It runs as a delivery of the outbox (shared/deliveryengine, channel
// pull_request): a scan_completed event, or a pull_request_scan event when
// the CI metadata came after the scan completed, becomes one delivery per
// matching integration, retried with back-off (the host's Retry-After and
// rate-limit reset honoured), failed for good past the horizon, and logged
// like a webhook's. A retried delivery edits what an earlier attempt
// created: it never posts twice. See docs/pull-requests.md.
package prdecor

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what a decoration reads and writes.
type Store struct {
	Baselines interface {
		BaselineOpen(ctx context.Context, companyID int64, projectID int64, branch string, tool string, fingerprints []string) (baselines.Open, error)
	}
	Catalog interface {
		AllBlockingRules(ctx context.Context, companyID int64) ([]schema.BlockingRule, error)
		GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		AllIntegrations(ctx context.Context, companyID int64) ([]schema.Integration, error)
	}
	Deliveries interface {
		ClaimPRLink(ctx context.Context, p storedelivery.PRTarget, owner string, now time.Time, lease time.Duration) (storedelivery.PRLink, error)
		ClaimReviewLink(ctx context.Context, r storedelivery.ReviewTarget, owner string, now time.Time, lease time.Duration) (storedelivery.ReviewLink, error)
		ReleasePRLink(ctx context.Context, p storedelivery.PRTarget, owner string, commentID int64) error
		ReleaseReviewLink(ctx context.Context, r storedelivery.ReviewTarget, owner string, commentID int64) error
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
		ListIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, q page.Request) (page.Page[findings.Issue], error)
	}
	Scans interface {
		FirstScanBranch(ctx context.Context, companyID int64, projectID int64) (string, error)
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Baselines: st.Baselines, Catalog: st.Catalog, Deliveries: st.Deliveries, Lists: st.Lists, Scans: st.Scans}
}

// Decorator decorates pull requests.
type Decorator struct {
	Store  Store
	Host   *scmhost.Client
	Sealer secrets.Sealer
	// AppURL is the web application's base URL: the status links to the
	// scan there (no link when empty).
	AppURL string
	// Now is the clock of link leases (time.Now when nil).
	Now func() time.Time
}

// linkLease is how long a decoration holds a pull request's comment.
const linkLease = time.Minute

func (d *Decorator) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// Targets are the integrations that decorate the pull request of the
// event's scan: none when the event names no scan, the scan built no pull
// request, or no integration matches its host and owner.
func (d *Decorator) Targets(ctx context.Context, ev schema.Event) (string, []string, error) {
	var data struct {
		ScanID string `json:"scan_id"`
	}
	if json.Unmarshal(ev.Data, &data) != nil || data.ScanID == "" {
		return "", nil, nil
	}
	sc, err := d.Store.Scans.GetScan(ctx, ev.CompanyID, data.ScanID)
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && sc.PullRequest == nil) {
		return data.ScanID, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	all, err := d.Store.Catalog.AllIntegrations(ctx, ev.CompanyID)
	if err != nil {
		return "", nil, err
	}
	var out []string
	for _, in := range all {
		if Matches(in, *sc.PullRequest) {
			out = append(out, in.UUID)
		}
	}
	return data.ScanID, out, nil
}

// Matches reports whether an integration decorates a pull request: the
// integration not expired and of the pull request's provider (a GitHub
// pull request, a GitLab merge request), its base URL's host the
// repository's (on GitHub also the API host of it: api.github.com for
// github.com), and the repository's owner on its org allow-list when it
// has one. On GitLab the owner is the project's top-level group: an
// allow-list entry "platform" admits platform/payments/api; subgroups
// cannot be listed on their own.
func Matches(in schema.Integration, pr pullrequest.PullRequest) bool {
	u, err := url.Parse(in.BaseURL)
	if err != nil || in.Expired || pr.Provider != in.HostProvider() {
		return false
	}
	host := strings.ToLower(u.Host)
	if host != pr.Host && (pr.Provider != pullrequest.GitHub || host != "api."+pr.Host) {
		return false
	}
	return len(in.OrgAllowlist) == 0 || slices.ContainsFunc(in.OrgAllowlist, func(o string) bool { return strings.EqualFold(o, pr.Owner()) })
}

// Decorate decorates the pull request of a scan through one integration:
// the summary comment, the status on the head commit, and the inline
// review comments when the integration enables them.
func (d *Decorator) Decorate(ctx context.Context, companyID int64, scanID, integration string) outbound.Outcome {
	job, gone, err := d.prepare(ctx, companyID, scanID, integration)
	switch {
	case err != nil:
		return outbound.Outcome{Retryable: true, Err: "reading the scan or opening the token: " + err.Error()}
	case gone != "":
		return outbound.Outcome{Err: gone, Gone: true}
	}
	sum, err := summarize(ctx, d.Store, job.scan, job.project)
	if err != nil {
		return outbound.Outcome{Retryable: true, Err: "summarizing the scan: " + err.Error()}
	}
	return d.publish(ctx, job, sum)
}

// job is what one decoration needs, read.
type job struct {
	scan        scans.Scan
	project     schema.Project
	integration schema.Integration
	token       string
}

// prepare reads the scan, its project and the integration and opens the
// token; gone says why there is nothing to do (for good).
func (d *Decorator) prepare(ctx context.Context, companyID int64, scanID, integration string) (job, string, error) {
	var j job
	var err error
	if j.scan, err = d.Store.Scans.GetScan(ctx, companyID, scanID); errors.Is(err, ddb.ErrNotFound) {
		return j, "the scan is gone", nil
	} else if err != nil {
		return j, "", err
	}
	if j.integration, err = d.Store.Catalog.GetIntegration(ctx, companyID, integration); errors.Is(err, ddb.ErrNotFound) {
		return j, "the integration is gone", nil
	} else if err != nil {
		return j, "", err
	}
	if j.scan.PullRequest == nil || !Matches(j.integration, *j.scan.PullRequest) {
		return j, "the integration no longer matches the pull request", nil
	}
	if j.project, err = d.Store.Catalog.GetProject(ctx, companyID, j.scan.ProjectID); errors.Is(err, ddb.ErrNotFound) {
		return j, "the project is gone", nil
	} else if err != nil {
		return j, "", err
	}
	j.token, err = d.Sealer.Open(ctx, j.integration.SealedToken, catalog.IntegrationTokenRecord(companyID, integration))
	return j, "", err
}
