package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// rule is a triage rule the seed created, with its acceptance's end
// (zero: none), after which applying it is refused.
type rule struct {
	id  string
	end time.Time
}

// ruleBody draws a rule: gosec's findings of one CWE, file or least
// urgency, dismissed, accepted until a date, or set to low urgency.
func (w *world) ruleBody() (map[string]any, time.Time) {
	m := map[string]any{"tool": "gosec"}
	switch w.rng.IntN(3) {
	case 0:
		_, cwe, _ := poolRule(w.rng.IntN(poolSize))
		m["cwe"] = fmt.Sprintf("CWE-%d", cwe)
	case 1:
		path, _ := poolFile(w.rng.IntN(poolSize))
		m["path"] = path
	default:
		m["urgency_at_least"] = pick(w.rng, []string{"ME", "HI"})
	}
	var end time.Time
	a := map[string]any{}
	switch w.rng.IntN(3) {
	case 0:
		a["status"], a["reason"] = "false_positive", pick(w.rng, reasons)
	case 1:
		end = w.now().Add(time.Duration(1+w.rng.IntN(240)) * time.Hour).Truncate(time.Second)
		a["status"], a["reason"], a["expires_at"] = "accepted_risk", pick(w.rng, reasons), end.Format(time.RFC3339)
	default:
		a["urgency"] = "LO"
	}
	return map[string]any{"matcher": m, "action": a}, end
}

// stepRule creates a rule and applies it, or applies (or deletes) an
// earlier one: the application changes what its dry run counted, and
// exactly the issues it says. A rule stays active for the scans ingested
// after it.
func (w *world) stepRule() {
	if len(w.rules) > 0 && w.rng.IntN(4) == 0 {
		n := w.rng.IntN(len(w.rules))
		w.doOK(200, "DELETE", "/triage-rules/"+w.rules[n].id, "", nil)
		w.note("delete rule %s", w.rules[n].id)
		w.rules = slices.Delete(w.rules, n, n+1)
		return
	}
	var r rule
	if len(w.rules) > 0 && w.rng.IntN(3) == 0 {
		r = pick(w.rng, w.rules)
	} else {
		body, end := w.ruleBody()
		b, _ := json.Marshal(body)
		var created struct {
			Rule struct{ ID string } `json:"rule"`
		}
		w.doOK(201, "POST", "/triage-rules", "application/json", b).Decode(w.t, &created)
		r = rule{id: created.Rule.ID, end: end}
		w.rules = append(w.rules, r)
		w.note("rule %s: %s", r.id, b)
	}
	w.applyRule(r)
}

// applyRule applies r after a dry run (refused once its acceptance ended).
func (w *world) applyRule(r rule) {
	path := "/triage-rules/" + r.id + "/apply"
	if !r.end.IsZero() && !w.now().Before(r.end) {
		w.doOK(400, "POST", path, "", nil)
		return
	}
	var dry, res struct {
		Changed int `json:"changed"`
	}
	w.doOK(200, "POST", path+"?dry_run=true", "", nil).Decode(w.t, &dry)
	before := w.issues()
	w.doOK(200, "POST", path, "", nil).Decode(w.t, &res)
	n, ids := changed(before, w.issues())
	w.note("apply rule %s: dry run %d, changed %d", r.id, dry.Changed, res.Changed)
	if res.Changed != dry.Changed || res.Changed != n {
		w.fatalf("rule %s: dry run %d, applied %d, %d issues changed %v", r.id, dry.Changed, res.Changed, n, ids)
	}
}

// stepBulkWorker runs a bulk triage operation of a project through the
// bulk triage worker (shared/bulktriage) in small pages, killed at a
// random call, then delivered again: it ends done, matching what the
// list matches and changing exactly what it counts. The operation item is
// stored as POST /issues/triage stores one past store.MaxTriage matches
// (a seed's few hundred issues never get there).
func (w *world) stepBulkWorker() {
	name := pick(w.rng, w.projects)
	pid, ok := w.projIDs[name]
	if !ok {
		return
	}
	ctx := context.Background()
	f := issuelists.IssueFilter{Scopes: []schema.Scope{{ProjectID: pid}}}
	if w.rng.IntN(2) == 0 {
		f.Scopes[0].Branch = pick(w.rng, w.branches)
	}
	query, err := issuelists.EncodeFilter(f)
	if err != nil {
		w.fatalf("filter: %v", err)
	}
	status := pick(w.rng, []string{"false_positive", "duplicate", "fix_in_progress", "open"})
	matched, err := w.st.Lists.ListIssues(ctx, w.co.ID, f, pageAll)
	if err != nil {
		w.fatalf("list: %v", err)
	}
	listed := matched.Count()
	op, err := w.st.Triage.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: w.co.ID, UserID: w.co.Admin.ID, Status: status,
		Reason: pick(w.rng, reasons), Filters: fmt.Sprintf(`{"project":%q}`, name), Query: query})
	if err != nil {
		w.fatalf("create operation: %v", err)
	}
	before := w.issues()
	job := bulktriage.Job{CompanyID: w.co.ID, ID: op.ID}
	size := 5 + w.rng.IntN(20)
	k := w.newKiller(30)
	kerr := (&bulktriage.Worker{Store: bulktriage.StoreOf(k.store(w)), Log: w.log, PageSize: size}).Run(k.context(), job)
	w.died("bulk worker", k)
	if err := (&bulktriage.Worker{Store: bulktriage.StoreOf(w.st), Log: w.log, PageSize: size}).Run(ctx, job); err != nil {
		w.fatalf("bulk worker after %s (%v): %v", k, kerr, err)
	}
	done, err := w.st.Triage.GetTriageOp(ctx, w.co.ID, op.ID)
	if err != nil {
		w.fatalf("operation: %v", err)
	}
	n, ids := changed(before, w.issues())
	w.note("bulk worker %s of %+v to %s, pages of %d, %s (%v): %s matched %d changed %d", name, f.Scopes, status, size, k, kerr, done.State, done.Matched, done.Changed)
	if done.State != triage.OpDone || done.Matched != listed || done.Processed != listed || done.Changed != int64(n) {
		w.fatalf("bulk worker %s (%v): %s matched %d processed %d changed %d; listed %d, %d changed %v",
			k, kerr, done.State, done.Matched, done.Processed, done.Changed, listed, n, ids)
	}
}
