package policies

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Triage rules: a matcher and an action that new findings receive at
// ingestion, company-wide or for one project; applied to existing issues
// only on request (a dry run first). A rule that requires approval acts
// once a company admin other than its author approves it. A rule that
// dismisses is a triage decision: only a caller who may triage issues
// creates, enables or applies one, and the company's
// dismissal_rules_require_approval setting makes it require approval
// (docs/findings.md#triage-rules).

var (
	errTriageRuleNotFound = httpapi.NotFound("Triage rule not found")
	errDismissNeedsTriage = httpapi.OfKind(httpapi.KindPermission,
		"A rule that dismisses (false_positive, accepted_risk) needs the %s permission", routes.PermTriageIssue)
	errApproverNotAdmin = httpapi.OfKind(httpapi.KindPermission, "Only a company admin other than the rule's author may approve it")
)

type triageRuleRequest struct {
	triagemodel.Body
	ProjectID        *int64 `json:"project_id"`
	Enabled          *bool  `json:"enabled"`
	RequiresApproval *bool  `json:"requires_approval"`
}

type triageRuleJSON struct {
	ID string `json:"id"`
	triagemodel.View
	ProjectID        *int64  `json:"project_id"`
	Enabled          bool    `json:"enabled"`
	RequiresApproval bool    `json:"requires_approval"`
	ApprovedBy       *int64  `json:"approved_by"`
	ApprovedAt       *string `json:"approved_at"`
	Active           bool    `json:"active"`
	CreatedBy        int64   `json:"created_by"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
}

// triageRuleView shows r at now: an acceptance rule whose end has passed
// is not active (it acts no more), however enabled and approved.
func triageRuleView(r triage.Rule, now time.Time) triageRuleJSON {
	v := triageRuleJSON{ID: r.ID, View: triagemodel.Show(r.Matcher, r.Action), Enabled: r.Enabled, RequiresApproval: r.RequiresApproval,
		Active: r.Active() && !r.Ended(now), CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.ProjectID != 0 {
		v.ProjectID = &r.ProjectID
	}
	if r.ApprovedBy != 0 {
		v.ApprovedBy, v.ApprovedAt = &r.ApprovedBy, &r.ApprovedAt
	}
	return v
}

type triageRuleResponse struct {
	Status string         `json:"status"`
	Rule   triageRuleJSON `json:"rule"`
}

// createTriageRule stores a rule: matcher and action required (validated
// by triagerule), enabled by default, company-wide unless project_id
// names a project of the company.
func (h handlers) createTriageRule(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req triageRuleRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	m, a, err := triagemodel.Parse(req.Body, h.now())
	if err != nil {
		return bad("%s", err.Error())
	}
	if a.Dismisses() && !p.Has(routes.PermTriageIssue) {
		return errDismissNeedsTriage
	}
	rule := triage.Rule{CompanyID: p.CompanyID, Matcher: m, Action: a, Enabled: true, CreatedBy: p.UserID}
	if req.Enabled != nil {
		rule.Enabled = *req.Enabled
	}
	if rule.RequiresApproval, err = h.requiresApproval(r.Context(), p.CompanyID, a, req.RequiresApproval); err != nil {
		return err
	}
	if req.ProjectID != nil {
		// Another company's project answers as a missing one.
		if _, err := h.store.Catalog.GetProject(r.Context(), p.CompanyID, *req.ProjectID); errors.Is(err, ddb.ErrNotFound) {
			return bad("project_id %d is not a project of the company", *req.ProjectID)
		} else if err != nil {
			return err
		}
		rule.ProjectID = *req.ProjectID
	}
	created, err := h.store.Triage.CreateTriageRule(r.Context(), rule)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, triageRuleResponse{Status: "ok", Rule: triageRuleView(created, h.now())})
}

// requiresApproval is whether a new rule with action a waits for approval:
// as its author asks, unless the company requires it of rules that
// dismiss (then asking for none is a 400).
func (h handlers) requiresApproval(ctx context.Context, companyID int64, a triagemodel.Action, asked *bool) (bool, error) {
	if !a.Dismisses() {
		return asked != nil && *asked, nil
	}
	settings, _, err := h.store.Catalog.SLASettings(ctx, companyID)
	switch {
	case err != nil:
		return false, err
	case !settings.DismissalRulesNeedApproval:
		return asked != nil && *asked, nil
	case asked != nil && !*asked:
		return false, bad("requires_approval cannot be false: the company requires approval of rules that dismiss (dismissal_rules_require_approval)")
	}
	return true, nil
}

// mayDecide refuses a caller who may not triage issues a rule that
// dismisses: enabling or applying one is triaging through it.
func (h handlers) mayDecide(ctx context.Context, p *auth.Principal, id string) error {
	if p.Has(routes.PermTriageIssue) {
		return nil
	}
	rule, err := h.store.Triage.GetTriageRule(ctx, p.CompanyID, id)
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return errTriageRuleNotFound
	case err != nil:
		return err
	case rule.Action.Dismisses():
		return errDismissNeedsTriage
	}
	return nil
}

// triageRuleAnswer answers a rule, or the route's error for err.
func (h handlers) triageRuleAnswer(w http.ResponseWriter, rule triage.Rule, err error) error {
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return errTriageRuleNotFound
	case errors.Is(err, triage.ErrOwnApproval), errors.Is(err, triage.ErrNoApproval):
		return bad("%s", err.Error())
	case err != nil:
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, triageRuleResponse{Status: "ok", Rule: triageRuleView(rule, h.now())})
}

func (h handlers) getTriageRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.store.Triage.GetTriageRule(r.Context(), auth.FromContext(r.Context()).CompanyID, r.PathValue("rule_id"))
	return h.triageRuleAnswer(w, rule, err)
}

// patchTriageRule enables or disables a rule; its matcher and action do
// not change (a new rule replaces one, so what was applied stays named).
func (h handlers) patchTriageRule(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Enabled == nil {
		return bad("enabled is required")
	}
	p := auth.FromContext(r.Context())
	if *req.Enabled {
		if err := h.mayDecide(r.Context(), p, r.PathValue("rule_id")); err != nil {
			return err
		}
	}
	rule, err := h.store.Triage.SetTriageRuleEnabled(r.Context(), p.CompanyID, r.PathValue("rule_id"), *req.Enabled)
	return h.triageRuleAnswer(w, rule, err)
}

func (h handlers) deleteTriageRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.store.Triage.DeleteTriageRule(r.Context(), auth.FromContext(r.Context()).CompanyID, r.PathValue("rule_id"))
	return h.triageRuleAnswer(w, rule, err)
}

// approveTriageRule approves a rule that requires it: a company admin
// does, its author cannot.
func (h handlers) approveTriageRule(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	if !p.IsAdmin {
		return errApproverNotAdmin
	}
	rule, err := h.store.Triage.ApproveTriageRule(r.Context(), p.CompanyID, r.PathValue("rule_id"), p.UserID)
	return h.triageRuleAnswer(w, rule, err)
}

type triageApplyResponse struct {
	Status  string   `json:"status"`
	DryRun  bool     `json:"dry_run"`
	Changed int      `json:"changed"`
	Sample  []string `json:"sample_issue_ids"`
}

// applyTriageRule applies a rule to the company's existing issues, or
// with dry_run counts exactly the issues an application would change. An
// application past store.MaxRuleApply issues (or SCA findings) answers 202
// with the operation that runs it (the bulk triage worker's), which GET
// /issues/triage/{operation_id} follows to its exact counts.
func (h handlers) applyTriageRule(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	dry, err := httpapi.BoolParam(r, "dry_run")
	if err != nil {
		return err
	}
	if !dry {
		if err := h.mayDecide(r.Context(), p, r.PathValue("rule_id")); err != nil {
			return err
		}
	}
	res, err := h.store.Triage.ApplyTriageRuleAll(r.Context(), p.CompanyID, r.PathValue("rule_id"), dry, p.UserID)
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return errTriageRuleNotFound
	case errors.Is(err, triage.ErrRuleInactive), errors.Is(err, triage.ErrRuleEnded):
		return bad("%s", err.Error())
	case err != nil:
		return err
	case res.Operation != nil:
		return httpapi.WriteJSON(w, http.StatusAccepted, triageApplyOpResponse{Status: "ok", DryRun: false, Operation: bulktriage.Show(*res.Operation)})
	}
	return httpapi.WriteJSON(w, http.StatusOK, triageApplyResponse{Status: "ok", DryRun: dry, Changed: res.Changed, Sample: res.Sample})
}

type triageApplyOpResponse struct {
	Status    string          `json:"status"`
	DryRun    bool            `json:"dry_run"`
	Operation bulktriage.View `json:"operation"`
}

var triageRuleList = httpapi.Numbered("rules", "total_rules")

func (h handlers) listTriageRules(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	rules, err := h.store.Triage.ListTriageRules(r.Context(), p.CompanyID, pg.Query())
	if err != nil {
		return err
	}
	now := h.now()
	return httpapi.WriteList(w, pg, triageRuleList, page.Map(rules, func(rule triage.Rule) triageRuleJSON { return triageRuleView(rule, now) }))
}
