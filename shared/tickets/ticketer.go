// Package tickets keeps findings and tickets in step (docs/tickets.md).
// Its Ticketer is the outbound channel "tickets" (shared/outbound): a
// completed scan's open findings that a company's ticket rule matches are
// grouped (per finding, per rule or per CWE and project) and each group
// becomes one job; so are its SCA findings that an SCA rule matches (per
// finding, per advisory or per package and project; match.go); the attempt opens the group's ticket on GitHub or Jira
// once, under the link item's lease, finding what an earlier attempt
// created by its marker before it creates anything. Later scans add new
// findings of a group to its ticket, close it when they are all fixed and
// reopen it when one comes back; triage shows as a comment. The other way,
// Apply takes a tracker's report of a ticket's new state (a verified
// inbound event, or the daily reconciliation) back to the findings
// through the one issue write path.
package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Channel is the delivery channel of tickets.
const Channel = "tickets"

// Store is what the ticketer reads and writes besides its own area.
type Store struct {
	Catalog interface {
		GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
		GetIssue(ctx context.Context, companyID int64, id string) (findings.Issue, error)
	}
	SCA interface {
		GetSCAIssue(ctx context.Context, companyID int64, id string) (sca.Issue, error)
		ListScanSCAIssues(ctx context.Context, companyID int64, scanID string, q page.Request) (page.Page[sca.Issue], error)
		SetSCAStatuses(ctx context.Context, companyID int64, ids []string, decide sca.Decide, e ledger.AuditEntry) ([]string, error)
	}
	Scans interface {
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
	}
	Triage interface {
		DecideIssue(ctx context.Context, companyID int64, id string, u triage.IssueUpdate, scope string, by findings.Actor) (findings.Issue, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Lists: st.Lists, SCA: st.SCA, Scans: st.Scans, Triage: st.Triage}
}

// Ticketer opens and keeps tickets.
type Ticketer struct {
	Store   Store
	Tickets *storetickets.Tickets
	Host    *scmhost.Client // GitHub
	Jira    *http.Client    // guarded (NewJiraHTTP)
	Sealer  secrets.Sealer
	// AppURL is the web application's base URL tickets link to ("": none).
	AppURL string
	// Now is the clock of leases and reconciliation (time.Now when nil).
	Now func() time.Time
}

func (d *Ticketer) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// Bounds of one event's work.
const (
	// MaxScanIssues is how many of a scan's issues the rules look at.
	MaxScanIssues = 25_000
	// MaxScanSCAIssues is how many of a scan's SCA findings they look at.
	MaxScanSCAIssues = 25_000
	// linkLease is how long an attempt holds a ticket's link.
	linkLease = time.Minute
	// maxListed is how many findings a ticket's text lists.
	maxListed = 50
)

// Job kinds.
const (
	kindOpen    = "open"    // open a group's ticket, or add new findings to it
	kindSync    = "sync"    // close or reopen a ticket after a scan
	kindComment = "comment" // a triage of a finding, as a comment
)

// job is a delivery's payload.
type job struct {
	Kind      string   `json:"kind"`
	RuleID    string   `json:"rule_id,omitempty"`
	Group     string   `json:"group,omitempty"`
	ProjectID int64    `json:"project_id,omitempty"`
	ScanID    string   `json:"scan_id,omitempty"`
	IssueIDs  []string `json:"issue_ids,omitempty"`
	LinkID    string   `json:"link_id,omitempty"`
	Action    string   `json:"action,omitempty"` // close, reopen (sync)
	IssueID   string   `json:"issue_id,omitempty"`
}

// Name is the delivery channel.
func (d *Ticketer) Name() string { return Channel }

// Attempt carries out one job once.
func (d *Ticketer) Attempt(ctx context.Context, companyID int64, recipient string, payload json.RawMessage) outbound.Outcome {
	var j job
	if json.Unmarshal(payload, &j) != nil {
		return outbound.Outcome{Err: "the delivery's payload cannot be read", Gone: true}
	}
	switch j.Kind {
	case kindOpen:
		return d.open(ctx, companyID, j)
	case kindSync:
		return d.sync(ctx, companyID, j)
	case kindComment:
		return d.comment(ctx, companyID, j)
	}
	return outbound.Outcome{Err: "unknown ticket job " + j.Kind, Gone: true}
}

// storeFailure is a failed read or write of ours.
func storeFailure(doing string, err error) outbound.Outcome {
	return outbound.Outcome{Retryable: true, Err: doing + ": " + err.Error()}
}

// trackerFor is the tracker of a destination; gone says why there is
// none for good.
func (d *Ticketer) trackerFor(ctx context.Context, companyID int64, kind, integration, repo string) (Tracker, string, error) {
	switch kind {
	case SystemGitHub:
		in, err := d.Store.Catalog.GetIntegration(ctx, companyID, integration)
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, "the integration is gone", nil
		} else if err != nil {
			return nil, "", err
		}
		token, err := d.Sealer.Open(ctx, in.SealedToken, catalog.IntegrationTokenRecord(companyID, integration))
		if err != nil {
			return nil, "", err
		}
		gh, err := d.Host.GitHub(in.BaseURL, in.GatewayPrefix, token)
		if err != nil {
			return nil, "the integration's base URL is not usable", nil
		}
		owner, name, _ := strings.Cut(repo, "/")
		return gitHubTracker{gh: gh, owner: owner, repo: name, integration: integration}, "", nil
	case SystemJira:
		in, err := d.Tickets.GetJira(ctx, companyID, integration)
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, "the integration is gone", nil
		} else if err != nil {
			return nil, "", err
		}
		token, err := d.Sealer.Open(ctx, in.SealedToken, storetickets.JiraTokenRecord(companyID, integration))
		if err != nil {
			return nil, "", err
		}
		return jiraTracker{c: &JiraClient{HTTP: d.Jira, Site: in.SiteURL, Email: in.Email, Token: token}, in: in, integration: integration}, "", nil
	}
	return nil, "unknown destination " + kind, nil
}

// linkTracker is the tracker of a link's ticket.
func (d *Ticketer) linkTracker(ctx context.Context, companyID int64, l schema.TicketLink) (Tracker, string, error) {
	return d.trackerFor(ctx, companyID, l.System, l.Integration, l.Repo)
}

// NewChannel is the tickets channel over st: GitHub through scmhost and
// Jira through the guarded dialer (loopback hosts only with
// allowLoopback), secrets opened with sealer, tickets linking to appURL.
func NewChannel(st Store, area *storetickets.Tickets, sealer secrets.Sealer, appURL string, allowLoopback bool) *Ticketer {
	return &Ticketer{Store: st, Tickets: area, Sealer: sealer, AppURL: appURL,
		Host: scmhost.New(scmhost.Options{AllowLoopback: allowLoopback}), Jira: NewJiraHTTP(callTimeout, allowLoopback), Now: area.Clock}
}

// callTimeout bounds one call to a tracker.
const callTimeout = 10 * time.Second
