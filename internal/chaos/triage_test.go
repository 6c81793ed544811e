package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/store/findings"
)

// reasons are the triage reasons steps draw from: few, so that a triage
// sometimes repeats one (and changes nothing).
var reasons = []string{"test data", "vendor fix pending", "not reachable"}

// randomIssue is one issue of the company at random (false: none yet).
func (w *world) randomIssue(all map[string]findings.Issue) (findings.Issue, bool) {
	if len(all) == 0 {
		return findings.Issue{}, false
	}
	ids := slices.Sorted(maps.Keys(all))
	return all[pick(w.rng, ids)], true
}

// stepPatch triages one issue (PATCH /issue/{id}) with a random status and
// scope: the issue takes the status, and a project decision reaches the
// finding's issues on every other branch (but fixed ones and a branch's
// own decision).
func (w *world) stepPatch() {
	before := w.issues()
	i, ok := w.randomIssue(before)
	if !ok {
		return
	}
	status := pick(w.rng, findings.ManualStatuses)
	scope := pick(w.rng, []string{"project", "branch"})
	body := map[string]any{"status": status, "reason": pick(w.rng, reasons), "scope": scope}
	if status == "accepted_risk" && w.rng.IntN(2) == 0 {
		body["expires_at"] = w.now().Add(time.Duration(1+w.rng.IntN(240)) * time.Hour).Format(time.RFC3339)
	}
	b, _ := json.Marshal(body)
	w.doOK(200, "PATCH", "/issue/"+i.ID, "application/json", b)
	after := w.issues()
	w.note("patch %s/%s %s (%s) -> %s", i.ProjectName, i.Branch, i.ID[:8], i.Status, b)
	if got := after[i.ID].Status; got != status {
		w.fatalf("PATCH %s to %s: status %s", i.ID, status, got)
	}
	if scope != "project" || !findings.Decisive(status) {
		return
	}
	for _, e := range after {
		if e.ID == i.ID || e.ProjectID != i.ProjectID || e.Tool != i.Tool || e.Fingerprint != i.Fingerprint {
			continue
		}
		if e.Status != status && e.Status != "fixed" && e.Decision.Scope != "branch" {
			w.fatalf("project decision %s on %s/%s %s did not reach branch %s: %s is %s (decision %+v, was %s %+v)",
				status, i.ProjectName, i.Branch, i.ID, e.Branch, e.ID, e.Status, e.Decision, before[e.ID].Status, before[e.ID].Decision)
		}
	}
}

// filters draws the filters of a bulk triage: a project, and perhaps a
// branch, an urgency, a CWE or a status.
func (w *world) filters() map[string]string {
	f := map[string]string{"project": pick(w.rng, w.projects)}
	if w.rng.IntN(2) == 0 {
		f["branch"] = pick(w.rng, w.branches)
	}
	switch w.rng.IntN(4) {
	case 0:
		f["urgency"] = pick(w.rng, []string{"HI", "ME", "LO"})
	case 1:
		_, cwe, _ := poolRule(w.rng.IntN(poolSize))
		f["cwe"] = fmt.Sprint(cwe)
	case 2:
		f["status"] = pick(w.rng, []string{"open", "fixed", "false_positive", "accepted_risk"})
	}
	return f
}

// listTotal is GET /issues's total for the filters.
func (w *world) listTotal(f map[string]string) int {
	q := url.Values{"page_size": {"1"}}
	for k, v := range f {
		q.Set(k, v)
	}
	var page struct {
		Status string `json:"status"`
		Total  int    `json:"total_issues"`
	}
	w.doOK(200, "GET", "/issues?"+q.Encode(), "", nil).Decode(w.t, &page)
	return page.Total
}

// stepBulk triages what the filters match (POST /issues/triage, at once
// below store.MaxTriage matches): it matches what GET /issues lists for
// the same filters, and changes exactly the issues it says.
func (w *world) stepBulk() {
	f := w.filters()
	status := pick(w.rng, findings.ManualStatuses)
	body := map[string]any{"filters": f, "status": status, "reason": pick(w.rng, reasons)}
	if status == "accepted_risk" && w.rng.IntN(2) == 0 {
		body["expires_at"] = w.now().Add(time.Duration(1+w.rng.IntN(240)) * time.Hour).Format(time.RFC3339)
	}
	b, _ := json.Marshal(body)
	listed := w.listTotal(f)
	before := w.issues()
	var res struct {
		Matched int `json:"matched"`
		Changed int `json:"changed"`
	}
	w.doOK(200, "POST", "/issues/triage", "application/json", b).Decode(w.t, &res)
	n, ids := changed(before, w.issues())
	w.note("bulk triage %s: matched %d changed %d", b, res.Matched, res.Changed)
	if res.Matched != listed || res.Changed != n {
		w.fatalf("bulk triage %s: matched %d changed %d; GET /issues lists %d, %d issues changed %v", b, res.Matched, res.Changed, listed, n, ids)
	}
}
