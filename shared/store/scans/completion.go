package scans

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Applied is what a scan's SAST apply (findings.ApplyScan) hands its
// completion: how many findings the scan reported, and its fresh issues
// (those new in the scan, as they were created).
type Applied struct {
	Findings int
	Fresh    []FreshIssue
	// New is how many of Fresh are new to act on or triage: all but those
	// a suppression comment hid as they came (the findings area, which
	// owns the statuses, counts them). Fresh is the same on every attempt
	// of the scan, so New is too.
	New int
}

// FreshIssue is what a completion's events show of an issue new in the
// scan.
type FreshIssue struct {
	ID, Title, FilePath string
	Line, CWE           int
	Urgency, Status     string
}

// maxListedIssues bounds the issues a new-issue event lists (its count is
// the whole number).
const maxListedIssues = 50

// CompletionItems are what completing sc writes, the one way a scan
// completes: the scan's status complete with its findings count and
// completed_at, its processing marker deleted, and its events
// (completionEvents). The SAST apply (findings.ApplyScan) appends them to
// its last transaction, the one that moves the branch's head to the scan
// under its lease, so a scan is complete exactly when its branch treats
// it as applied (see docs/architecture.md, "A scan's life").
func (x *Scans) CompletionItems(ctx context.Context, sc Scan, done Applied) ([]types.TransactWriteItem, error) {
	p, err := x.d.Catalog.GetProject(ctx, sc.CompanyID, sc.ProjectID)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) { // a project deleted meanwhile has no name to give
		return nil, err
	}
	events, err := completionEvents(sc, p.Name, done, x.t.Clock())
	if err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("status"), expression.Value(ScanComplete)).
		Set(expression.Name("findings"), expression.Value(done.Findings)).
		Set(expression.Name("completed_at"), expression.Value(x.t.Stamp()))
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	scan, err := x.t.TxUpdate(Key(sc.CompanyID, sc.ID), upd, &exists)
	if err != nil {
		return nil, err
	}
	clear, err := TxClearProcessing(x.t, sc)
	if err != nil {
		return nil, err
	}
	items := append([]types.TransactWriteItem{scan}, clear...)
	for _, e := range events {
		item, err := x.l.TxEvent(e)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// completionEvents are the events of a completed scan: scan_completed, and
// new_critical_issue / new_high_issue when it found new issues of that
// urgency. Their ids name the scan, so completing it again records the
// same events.
func completionEvents(sc Scan, projectName string, done Applied, at time.Time) ([]schema.Event, error) {
	scope := map[string]any{"scan_id": sc.ID, "project_id": sc.ProjectID, "project_name": projectName, "branch": sc.Branch}
	completed := map[string]any{"tool": sc.Tool, "findings": done.Findings, "new_issues": done.New,
		"completed_at": at.UTC().Format(time.RFC3339)}
	maps.Copy(completed, scope)
	kinds, data := []string{"scan_completed"}, []map[string]any{completed}
	for _, t := range []struct{ urgency, typ string }{{"CR", "new_critical_issue"}, {"HI", "new_high_issue"}} {
		if d, ok := newIssues(done.Fresh, t.urgency); ok {
			maps.Copy(d, scope)
			kinds, data = append(kinds, t.typ), append(data, d)
		}
	}
	events := make([]schema.Event, len(kinds))
	for n, typ := range kinds {
		b, err := json.Marshal(data[n])
		if err != nil {
			return nil, err
		}
		events[n] = schema.Event{ID: typ + "-" + sc.ID, CompanyID: sc.CompanyID, Type: typ, Data: b}
	}
	return events, nil
}

// newIssues is the data of a new-issue event of urgency: how many fresh
// issues of that urgency there are to act on, and the first
// maxListedIssues of them; false when there are none.
func newIssues(fresh []FreshIssue, urgency string) (map[string]any, bool) {
	var listed []map[string]any
	count := 0
	for _, i := range fresh {
		if i.Urgency != urgency || (i.Status != "open" && i.Status != "fix_in_progress") { // suppressed or dismissed: nothing to act on
			continue
		}
		if count++; len(listed) < maxListedIssues {
			listed = append(listed, map[string]any{"id": i.ID, "title": i.Title, "file_path": i.FilePath,
				"line": i.Line, "cwe": i.CWE, "urgency": i.Urgency})
		}
	}
	return map[string]any{"count": count, "issues": listed}, count > 0
}
