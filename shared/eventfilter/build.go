package eventfilter

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Source reads what an event's filter view needs beyond the event: the
// issues a scan reported.
type Source interface {
	EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
}

// MaxExamined bounds the issues of a scan Build reads to find its new
// ones (50 batch reads of 100): a scan reporting more has its first
// MaxExamined issues (in issue id order) looked at; counts.new of a
// scan_completed event is its own new_issues, exact at any size.
const MaxExamined = 5000

// scanEvents are the event types whose new_findings Build reads.
var scanEvents = []string{"scan_completed", "new_critical_issue", "new_high_issue"}

var errEnough = errors.New("enough issues examined")

// Build is ev as a filter sees it. src is read only for scan events (the
// scan's new issues); nil reads nothing.
func Build(ctx context.Context, src Source, ev schema.Event) (Event, error) {
	var raw map[string]any
	if len(ev.Data) > 0 {
		if err := json.Unmarshal(ev.Data, &raw); err != nil {
			return Event{}, err
		}
	}
	if raw == nil {
		raw = map[string]any{}
	}
	out := Event{Type: ev.Type, ID: ev.ID, CreatedAt: ev.CreatedAt.UTC(), Data: NewData(bound(raw, 0).(map[string]any))}
	out.Project = Project{ID: num(raw, "project_id"), Name: str(raw, "project_name"), Branch: str(raw, "branch")}
	out.Counts = Counts{Findings: num(raw, "findings"), Open: num(raw, "open_issues"), Overdue: num(raw, "overdue"),
		DueSoon: num(raw, "due_soon")}
	switch ev.Type {
	case "new_critical_issue", "new_high_issue":
		out.Counts.New = num(raw, "count")
	case "policy_violation":
		out.Counts.Blocked = num(raw, "count")
	}
	if id := str(raw, "issue_id"); id != "" {
		out.Issue = Issue{ID: id, Title: str(raw, "title"), Status: str(raw, "status"),
			PreviousStatus: str(raw, "previous_status"), Urgency: str(raw, "urgency")}
	}
	out.NewFindings = []Finding{}
	scanID := str(raw, "scan_id")
	if src == nil || scanID == "" || !slices.Contains(scanEvents, ev.Type) {
		return out, nil
	}
	found, n, err := NewFindings(ctx, src, ev.CompanyID, scanID)
	if errors.Is(err, ddb.ErrNotFound) {
		return out, nil // the scan is gone: it has no issues to show
	}
	if err != nil {
		return Event{}, err
	}
	out.NewFindings = found
	if ev.Type == "scan_completed" {
		out.Counts.New = int64(n)
		if _, ok := raw["new_issues"]; ok { // exact, whatever MaxExamined cut
			out.Counts.New = num(raw, "new_issues")
		}
	}
	return out, nil
}

// NewFindings are the most urgent MaxNewFindings issues a scan found first
// (whatever became of them since, so an event reads the same later, as the
// dry run reads it; but not those a rule suppressed as they came), among
// the first MaxExamined it reported, most urgent first; and how many new
// issues were seen in all.
func NewFindings(ctx context.Context, src Source, companyID int64, scanID string) ([]Finding, int, error) {
	var out []Finding
	examined := 0
	err := src.EachScanIssue(ctx, companyID, scanID, func(i findings.Issue) error {
		if examined++; examined > MaxExamined {
			return errEnough
		}
		if i.ScanID == scanID && i.Status != "suppressed" {
			out = append(out, findingOf(i))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, 0, err
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return rank(a.Urgency) - rank(b.Urgency) })
	return out[:min(len(out), MaxNewFindings)], len(out), nil
}

func findingOf(i findings.Issue) Finding {
	return Finding{ID: i.ID, Urgency: i.Urgency, Rule: text(i.RuleID), CWE: int64(i.CWE), Tool: text(i.Tool),
		Path: text(i.FilePath), Line: int64(i.Line), Title: text(i.Title)}
}

// rank orders urgency codes, most urgent first; unknown codes last.
func rank(u string) int {
	if n := slices.Index(triagemodel.Urgencies, u); n >= 0 {
		return n
	}
	return len(triagemodel.Urgencies)
}

// text is s cut to MaxText characters.
func text(s string) string {
	if utf8.RuneCountInString(s) <= MaxText {
		return s
	}
	return string([]rune(s)[:MaxText])
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return text(s)
}

func num(m map[string]any, k string) int64 {
	switch v := m[k].(type) {
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// bound cuts v (JSON-decoded) to what the cost estimate assumes: strings
// of MaxText characters, lists and maps of MaxListed members (a map's
// first keys in order), maxDepth levels (deeper values are null).
func bound(v any, depth int) any {
	switch v := v.(type) {
	case string:
		return text(v)
	case []any:
		if depth >= maxDepth {
			return nil
		}
		out := make([]any, 0, min(len(v), MaxListed))
		for _, e := range v[:min(len(v), MaxListed)] {
			out = append(out, bound(e, depth+1))
		}
		return out
	case map[string]any:
		if depth >= maxDepth {
			return nil
		}
		keys := slices.Sorted(maps.Keys(v))
		out := make(map[string]any, min(len(keys), MaxListed))
		for _, k := range keys[:min(len(keys), MaxListed)] {
			out[text(k)] = bound(v[k], depth+1)
		}
		return out
	}
	return v
}
