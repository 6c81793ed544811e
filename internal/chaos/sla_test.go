package chaos

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/triage"
)

// pageAll asks a list for its total only.
var pageAll = storepage.Request{}

// stepAccept accepts the risk of an issue that is not fixed, until 1 to
// 240 hours from now (PATCH /issue/{id}, scope branch or project).
func (w *world) stepAccept() {
	all := w.issues()
	var open []findings.Issue
	for _, i := range all {
		if i.Status != "fixed" && i.Status != "accepted_risk" {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return
	}
	i, _ := w.randomIssue(byID(open))
	end := w.now().Add(time.Duration(1+w.rng.IntN(240)) * time.Hour).Truncate(time.Second)
	b, _ := json.Marshal(map[string]any{"status": "accepted_risk", "reason": pick(w.rng, reasons),
		"expires_at": end.Format(time.RFC3339), "scope": pick(w.rng, []string{"project", "branch"})})
	w.doOK(200, "PATCH", "/issue/"+i.ID, "application/json", b)
	w.note("accept %s/%s %s: %s", i.ProjectName, i.Branch, i.ID[:8], b)
}

func byID(is []findings.Issue) map[string]findings.Issue {
	out := map[string]findings.Issue{}
	for _, i := range is {
		out[i.ID] = i
	}
	return out
}

// stepTime moves the clock on (hours to days) and runs the scheduler's
// SLA job, which ends the acceptances whose end has come: exactly those
// issues reopen (reason "risk acceptance expired"), the others keep
// their status, and the job counts at least the reopened ones (it counts
// breaches too).
func (w *world) stepTime() {
	w.advance(time.Duration(1+w.rng.IntN(120)) * time.Hour)
	now := w.now()
	before := w.issues()
	n, err := scheduler.SLAChecks(context.Background(), scheduler.StoreOf(w.st), now)
	if err != nil {
		w.fatalf("SLA job at %s: %v", now.Format(time.RFC3339), err)
	}
	after := w.issues()
	reopened := 0
	for id, b := range before {
		a := after[id]
		end, _ := time.Parse(time.RFC3339, b.ExpiresAt)
		due := b.Status == "accepted_risk" && b.ExpiresAt != "" && !end.After(now)
		switch {
		case due && (a.Status != "open" || a.Reason != triage.AcceptanceExpired):
			w.fatalf("SLA job at %s: %s accepted until %s is %s (%q)", now.Format(time.RFC3339), id, b.ExpiresAt, a.Status, a.Reason)
		case due:
			reopened++
		case a.Status != b.Status:
			w.fatalf("SLA job at %s: %s (accepted until %q) went from %s to %s", now.Format(time.RFC3339), id, b.ExpiresAt, b.Status, a.Status)
		}
	}
	w.note("time -> %s: SLA job handled %d, reopened %d", now.Format(time.RFC3339), n, reopened)
	if n < reopened {
		w.fatalf("SLA job at %s counted %d, reopened %d", now.Format(time.RFC3339), n, reopened)
	}
}
