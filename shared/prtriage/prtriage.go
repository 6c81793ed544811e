// Package prtriage carries out triage commands reviewers write in a pull
// request's conversation, under the summary comment shared/prdecor keeps
// there:
//
//	/codescan ignore <ref> <reason>
//	/codescan accept-risk <ref> <days> <reason>
//
// <ref> is a finding's Ref in the summary (the start of its issue id). The
// command acts as the company's user whose host login (scm_login) is the
// comment's author, only if that user is active and may triage
// (issues.triage_issue, or admin); it goes through the one issue write
// path (store.DecideIssue, as PATCH /issue/{issue_id}), with a reason that
// says where it came from. It knows nothing of HTTP or of the host's API:
// the inbound webhook route (functions/integrations) verifies the
// delivery, remembers it and posts the answer this package writes.
package prtriage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Store is what a command reads and writes.
type Store struct {
	Catalog interface {
		PRProjects(ctx context.Context, companyID int64, integration string, repo string, number string) ([]int64, error)
		UserBySCMLogin(ctx context.Context, companyID int64, login string) (schema.User, error)
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
	}
	Scans interface {
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
	Tenancy interface {
		GetCompany(ctx context.Context, id int64) (schema.Company, error)
	}
	Triage interface {
		DecideIssue(ctx context.Context, companyID int64, id string, u triage.IssueUpdate, scope string, by findings.Actor) (findings.Issue, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Lists: st.Lists, Scans: st.Scans, Tenancy: st.Tenancy, Triage: st.Triage}
}

// ViaPullRequest is how the audit log says a command's author acted: a
// comment on the host, linked to the user by login.
const ViaPullRequest = "pull_request_comment"

// Request is one command and where it was written.
type Request struct {
	CompanyID   int64
	Integration string // the integration's uuid
	Host        string // the repository's web host, lower case (github.com)
	Repo        string // owner/name
	Number      int    // the pull request (GitLab: the merge request's iid)
	// Provider is the host's kind (pullrequest.GitHub, pullrequest.GitLab;
	// "" is GitHub): the history names a "merge request !N" on GitLab.
	Provider string
	Login    string // the comment's author, as the host names them
	Command  Command
}

// provider is the request's host kind, GitHub's when unset.
func (r Request) provider() string {
	if r.Provider == "" {
		return pullrequest.GitHub
	}
	return r.Provider
}

// source names where a command was written, as the host names it.
func (r Request) source() string {
	if r.provider() == pullrequest.GitLab {
		return fmt.Sprintf("merge request !%d", r.Number)
	}
	return fmt.Sprintf("pull request #%d", r.Number)
}

// Results of a command.
const (
	Triaged   = "triaged"   // the issue changed
	Unchanged = "unchanged" // the issue already had the status
	Refused   = "refused"   // not carried out: the reply says why
	Ignored   = "ignored"   // not acted on, no reply (a deactivated account)
)

// Outcome is what a command did and what the author is told.
type Outcome struct {
	Result string
	// Reply is the Markdown comment to post on the pull request, ""
	// when a reaction says enough (Triaged).
	Reply string
}

// Triager carries out commands.
type Triager struct {
	Store Store
	Now   func() time.Time // time.Now when nil
}

func (t *Triager) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

// Run carries out a command: who may, which finding, then the triage. An
// error is the store's (the command may be tried again); every refusal is
// an Outcome with its reply.
func (t *Triager) Run(ctx context.Context, req Request) (Outcome, error) {
	u, o, err := t.authorize(ctx, req)
	if err != nil || o.Result != "" {
		return o, err
	}
	issue, o, err := t.resolve(ctx, req)
	if err != nil || o.Result != "" {
		return o, err
	}
	cmd := req.Command
	if issue.Status == cmd.Status() {
		if err := t.heal(ctx, req, u, issue); err != nil {
			return Outcome{}, err
		}
		return Outcome{Result: Unchanged,
			Reply: reply("Finding `%s` is already `%s`; nothing changed.", cmd.Ref, cmd.Status())}, nil
	}
	if _, err := t.apply(ctx, req, u, issue); err != nil {
		return Outcome{}, err
	}
	return Outcome{Result: Triaged}, nil
}

// authorize finds the user the comment's author is linked to: active, of
// an active company, allowed to triage.
func (t *Triager) authorize(ctx context.Context, req Request) (schema.User, Outcome, error) {
	co, err := t.Store.Tenancy.GetCompany(ctx, req.CompanyID)
	if err != nil {
		return schema.User{}, Outcome{}, err
	}
	if !co.Active() {
		return schema.User{}, Outcome{Result: Ignored}, nil
	}
	login, ok := CanonicalLogin(req.Login)
	if !ok { // no login we link: not echoed either
		return schema.User{}, refused("the comment's author is not linked to an active Codescan user of this account."), nil
	}
	notLinked := refused("the host login `%s` is not linked to an active Codescan user of this account "+
		"(a company admin links it as the user's `scm_login`).", login)
	u, err := t.Store.Catalog.UserBySCMLogin(ctx, req.CompanyID, login)
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && !u.Active) {
		return schema.User{}, notLinked, nil
	}
	if err != nil {
		return schema.User{}, Outcome{}, err
	}
	if !u.IsAdmin && !slices.Contains(u.Permissions, routes.PermTriageIssue) {
		return schema.User{}, refused("the Codescan user linked to `%s` may not triage findings (`%s`).", login, routes.PermTriageIssue), nil
	}
	return u, Outcome{}, nil
}

// apply triages the issue through the issue write path, as the linked
// user (the audit log names them, by way of the comment).
func (t *Triager) apply(ctx context.Context, req Request, u schema.User, issue findings.Issue) (findings.Issue, error) {
	cmd := req.Command
	status := cmd.Status()
	why := fmt.Sprintf("%s (from %s by %s)", cmd.Reason, req.source(), req.Login)
	upd := triage.IssueUpdate{Status: &status, Reason: &why}
	if cmd.Verb == VerbAcceptRisk {
		now := t.now().UTC().Truncate(time.Second)
		end := now.AddDate(0, 0, cmd.Days)
		if err := schema.CheckAcceptanceEnd(end, now); err != nil {
			return findings.Issue{}, err // Parse bounds the days: a programming error
		}
		upd.Terms = schema.Terms{ExpiresAt: end.Format(time.RFC3339), Owner: u.ID}
	}
	ctx = ledger.WithAuditActor(ctx, ledger.AuditActor{UserID: u.ID, Via: ViaPullRequest})
	return t.Store.Triage.DecideIssue(ctx, req.CompanyID, issue.ID, upd, schema.DecisionProject, findings.Actor{UserID: u.ID})
}

// heal finishes what an attempt of the same command cut short: the issue
// has the status, but carrying the project decision to the other branches
// may have failed after (the host redelivers a failed delivery). The same
// decision again writes no history and no audit entry; DecideIssue only
// carries it on. A branch's own decision is left alone.
func (t *Triager) heal(ctx context.Context, req Request, u schema.User, issue findings.Issue) error {
	if issue.Decision.Scope != schema.DecisionProject {
		return nil
	}
	status := issue.Status
	ctx = ledger.WithAuditActor(ctx, ledger.AuditActor{UserID: u.ID, Via: ViaPullRequest})
	_, err := t.Store.Triage.DecideIssue(ctx, req.CompanyID, issue.ID, triage.IssueUpdate{Status: &status}, schema.DecisionProject, findings.Actor{UserID: u.ID})
	return err
}

// ReplyMarker starts every reply: a comment of ours is never a command,
// and a reader of the pull request's comments can tell them apart.
const ReplyMarker = "<!-- codescan:reply -->"

func reply(format string, args ...any) string {
	return ReplyMarker + "\n" + fmt.Sprintf(format, args...)
}

func refused(format string, args ...any) Outcome {
	return Outcome{Result: Refused, Reply: reply("Codescan did not act on this command: "+format, args...)}
}

// UsageReply is the reply to a command that cannot be read.
func UsageReply(err error) string {
	var pe *ParseError
	problem := "The command cannot be read."
	if errors.As(err, &pe) {
		problem = pe.Problem
	}
	return reply("Codescan did not act on this command. %s\n\nUsage: %s.", strings.TrimSpace(problem), Usage)
}
