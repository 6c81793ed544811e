package issues

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// issueJSON is a SAST issue as every route shows it: the drill-down's
// fields, the real client's Issue object (classification, details,
// auto_triage, location.file.language) and its lifecycle.
type issueJSON struct {
	ID                 string        `json:"id"`
	ScanID             *string       `json:"scan_id"`
	Status             string        `json:"status"`
	Urgency            string        `json:"urgency"`
	CreatedAt          string        `json:"created_at"`
	FirstDetectionDate string        `json:"first_detection_date"`
	Title              string        `json:"title"`
	RuleID             string        `json:"rule_id"`
	CWE                cweName       `json:"cwe"`
	Classification     cweRef        `json:"classification"`
	Location           issueWhere    `json:"location"`
	Details            issueDetails  `json:"details"`
	AutoTriage         autoTriage    `json:"auto_triage"`
	AutoFixSuggestion  *autoFix      `json:"auto_fix_suggestion"`
	Tool               string        `json:"tool"`
	Fingerprint        string        `json:"fingerprint"`
	LastSeenScanID     *string       `json:"last_seen_scan_id"`
	FixedAt            *string       `json:"fixed_at"`
	FixedScanID        *string       `json:"fixed_scan_id"`
	ReopenCount        int           `json:"reopen_count"`
	Reason             *string       `json:"reason"`
	AssignedTo         *assigneeJSON `json:"assigned_to"`
	UpdatedAt          *string       `json:"updated_at"`
	// RiskAcceptance is shown while the issue is an accepted risk with an
	// end; SLAStartedAt when its SLA clock restarted (an acceptance ended).
	RiskAcceptance *riskAcceptanceJSON `json:"risk_acceptance,omitempty"`
	SLAStartedAt   *string             `json:"sla_started_at"`
	Decision       *decisionJSON       `json:"decision"`
	// Tickets are the tickets that list the issue (see tickets.go).
	Tickets []storetickets.TicketView `json:"tickets"`
}

// decisionJSON is the triage decision an issue carries: made for the
// whole project or for its branch only, by whom, when, on which branch.
type decisionJSON struct {
	Scope     string `json:"scope"`
	DecidedBy *int64 `json:"decided_by"`
	DecidedAt string `json:"decided_at"`
	Source    string `json:"source"`
}

type cweName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type issueWhere struct {
	File       fileWithLanguage `json:"file"`
	LineNumber int              `json:"line_number"`
	Project    projectRef       `json:"project"`
}

type fileWithLanguage struct {
	fileRef
	Language string `json:"language"`
}

type projectRef struct {
	ID     int64   `json:"id"`
	Name   string  `json:"name"`
	Branch string  `json:"branch"`
	GitSHA *string `json:"git_sha"`
}

type issueDetails struct {
	Explanation string       `json:"explanation"`
	CodeSnippet *codeSnippet `json:"code_snippet"`
}

// codeSnippet is the flagged code: the lines around the finding when the
// run uploaded its file, else the report's own snippet, else null.
type codeSnippet struct {
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Code      string `json:"code"`
}

// snippetOf is the issue's code snippet, nil when it has none.
func snippetOf(i findings.Issue) *codeSnippet {
	start, code := i.CodeStart, i.Code
	if code == "" {
		start, code = max(i.Line, 1), strings.TrimRight(i.Snippet, "\r\n")
	}
	if code == "" {
		return nil
	}
	return &codeSnippet{StartLine: start, EndLine: start + strings.Count(code, "\n"), Code: code}
}

type autoTriage struct {
	FalsePositiveDetection struct {
		Status    string  `json:"status"`
		Reasoning *string `json:"reasoning"`
	} `json:"false_positive_detection"`
}

// autoFix is the scanner's own fix, as the real clients read a
// suggestion: VS Code shows its diff when the status is fix_available, the
// CLI prints its explanation and diff. Only a fix with a diff (one that
// applies to the file the run uploaded) is shown; else the suggestion is
// null, which both clients accept, rather than a status of our own.
type autoFix struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Patch  fixPatch `json:"patch"`
}

type fixPatch struct {
	Diff        string `json:"diff"`
	Explanation string `json:"explanation"`
	FullCode    string `json:"full_code"`
}

// fixSpace names the suggestions' ids: a name-based uuid of the issue's
// id, so an issue's suggestion keeps its id.
var fixSpace = uuid.MustParse("6f1c3b0e-8a52-5d2e-9c47-3e0b7a1d5f28")

// autoFixOf is the issue's suggestion, nil when it has no fix to show.
func autoFixOf(i findings.Issue) *autoFix {
	if i.Fix == nil || i.Fix.Diff == "" {
		return nil
	}
	return &autoFix{ID: uuid.NewSHA1(fixSpace, []byte(i.ID)).String(), Status: "fix_available",
		Patch: fixPatch{Diff: i.Fix.Diff, Explanation: i.Fix.Explanation, FullCode: i.Fix.FullCode}}
}

type assigneeJSON struct {
	ID string `json:"id"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// renderIssue is the issue's JSON; lastSeen is the last scan that reported
// it when the caller knows better than the issue item (see lastSeen).
func renderIssue(i findings.Issue, lastSeen string) issueJSON {
	c := cweOf(i.CWE)
	explanation := i.Message
	if explanation == "" {
		explanation = i.Title
	}
	out := issueJSON{
		ID: i.ID, ScanID: optional(i.ScanID), Status: i.Status, Urgency: i.Urgency,
		CreatedAt: i.CreatedAt, FirstDetectionDate: i.CreatedAt, Title: i.Title, RuleID: i.RuleID,
		CWE: cweName{ID: c.ID, Name: c.Name}, Classification: c,
		Location: issueWhere{
			File:       fileWithLanguage{fileRef: fileOf(i.FilePath), Language: ingest.Language(i.FilePath)},
			LineNumber: i.Line,
			Project:    projectRef{ID: i.ProjectID, Name: i.ProjectName, Branch: i.Branch},
		},
		Details: issueDetails{Explanation: explanation, CodeSnippet: snippetOf(i)}, Tool: i.Tool, Fingerprint: i.Fingerprint,
		LastSeenScanID: optional(lastSeen), FixedAt: optional(i.FixedAt), FixedScanID: optional(i.FixedScanID),
		ReopenCount: i.ReopenCount, Reason: optional(i.Reason), UpdatedAt: optional(i.UpdatedAt),
		RiskAcceptance: riskAcceptance(i), SLAStartedAt: optional(i.SLAStartedAt),
		AutoFixSuggestion: autoFixOf(i), Tickets: []storetickets.TicketView{},
	}
	out.AutoTriage.FalsePositiveDetection.Status = "not_started"
	if i.AssignedTo != 0 {
		out.AssignedTo = &assigneeJSON{ID: strconv.FormatInt(i.AssignedTo, 10)}
	}
	if d := i.Decision; d.Scope != "" {
		out.Decision = &decisionJSON{Scope: d.Scope, DecidedAt: d.DecidedAt, Source: d.Source}
		if d.DecidedBy != 0 {
			out.Decision.DecidedBy = &d.DecidedBy
		}
	}
	return out
}

var errIssueNotFound = httpapi.NotFound("Issue not found")

// issue answers GET /issue/{issue_id}: a SAST issue, else an SCA issue of
// the caller's company.
func (h handlers) issue(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	id := r.PathValue("issue_id")
	i, err := h.store.Lists.GetIssue(ctx, companyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		sca, err := h.store.SCA.GetSCAIssue(ctx, companyID, id)
		if errors.Is(err, ddb.ErrNotFound) {
			return errIssueNotFound
		}
		if err != nil {
			return err
		}
		return h.writeSCA(ctx, w, companyID, sca)
	}
	if err != nil {
		return err
	}
	seen, err := h.lastSeen(ctx, companyID, i)
	if err != nil {
		return err
	}
	out := []issueJSON{renderIssue(i, seen)}
	if err := h.withTickets(ctx, companyID, out); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "issue": out[0]})
}

// lastSeen is the last scan that reported the issue: the newest of the
// latest scans of its branch and tool (one per upload category) that
// reported it (re-detection writes no mark on the issue), else the one the
// issue remembers.
func (h handlers) lastSeen(ctx context.Context, companyID int64, i findings.Issue) (string, error) {
	if i.Status == "fixed" || i.Tool == "" {
		return i.LastSeenScanID, nil
	}
	heads, err := h.store.Lists.ScanHeadsOf(ctx, companyID, i.ProjectID, i.Branch, i.Tool)
	if err != nil {
		return "", err
	}
	for _, head := range heads {
		reported, err := h.store.Lists.ScanReported(ctx, companyID, head.ScanID, i.ID)
		if err != nil {
			return "", err
		}
		if reported {
			return head.ScanID, nil
		}
	}
	return i.LastSeenScanID, nil
}

// history answers GET /issue/{issue_id}/history.
func (h handlers) history(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	entries, err := h.store.Lists.IssueHistory(ctx, auth.FromContext(ctx).CompanyID, r.PathValue("issue_id"))
	if errors.Is(err, ddb.ErrNotFound) {
		return errIssueNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "history": entries})
}
