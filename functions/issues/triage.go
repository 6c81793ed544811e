package issues

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/schema"
	storetriage "github.com/acme/codescan-api/shared/store/triage"
)

// maxReason bounds a triage reason.
const maxReason = 2000

// parseStatus accepts one of statuses, any case: store.Statuses to
// filter by, store.ManualStatuses to set (suppressed comes only from the
// code).
func parseStatus(v string, statuses []string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	if !slices.Contains(statuses, s) {
		return "", httpapi.Invalid("status must be one of %s", strings.Join(statuses, ", "))
	}
	return s, nil
}

func checkReason(reason string) error {
	if len(reason) > maxReason {
		return httpapi.Invalid("reason exceeds %d bytes", maxReason)
	}
	return nil
}

// patch answers PATCH /issue/{issue_id}: status, reason and assignee, each
// optional, at least one (accepted_risk: with a reason, and its end and
// owner, see terms), and the decision's scope (project by default: the
// finding's issues on every branch follow it, see store.DecideIssue); the
// change goes through the issue write path (counters and history in one
// transaction).
func (h handlers) patch(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	var req struct {
		Status     *string         `json:"status"`
		Reason     *string         `json:"reason"`
		AssignedTo json.RawMessage `json:"assigned_to"`
		Scope      *string         `json:"scope"`
		acceptInput
	}
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	var u storetriage.IssueUpdate
	if req.Status != nil {
		st, err := parseStatus(*req.Status, findings.ManualStatuses)
		if err != nil {
			return err
		}
		u.Status = &st
	}
	status := ""
	if u.Status != nil {
		status = *u.Status
	}
	terms, err := h.terms(r, p.CompanyID, status, req.Reason, req.acceptInput)
	if err != nil {
		return err
	}
	u.Terms = terms
	if req.Reason != nil {
		if err := checkReason(*req.Reason); err != nil {
			return err
		}
		u.Reason = req.Reason
	}
	if req.AssignedTo != nil {
		id, err := h.assignee(r, p.CompanyID, req.AssignedTo)
		if err != nil {
			return err
		}
		u.AssignedTo = &id
	}
	if u == (storetriage.IssueUpdate{}) {
		return httpapi.Invalid("Give at least one of status, reason, assigned_to")
	}
	scope := schema.DecisionProject
	if req.Scope != nil {
		scope = strings.ToLower(strings.TrimSpace(*req.Scope))
		if !slices.Contains(storetriage.DecisionScopes, scope) {
			return httpapi.Invalid("scope must be one of %s", strings.Join(storetriage.DecisionScopes, ", "))
		}
	}
	i, err := h.store.Triage.DecideIssue(ctx, p.CompanyID, r.PathValue("issue_id"), u, scope, findings.Actor{UserID: p.UserID})
	if errors.Is(err, ddb.ErrNotFound) {
		return errIssueNotFound
	}
	if err != nil {
		return err
	}
	out := []issueJSON{renderIssue(i, i.LastSeenScanID)}
	if err := h.withTickets(r.Context(), i.CompanyID, out); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "issue": out[0]})
}

// assignee reads assigned_to: an active user of the company by id, or null
// to unassign (0).
func (h handlers) assignee(r *http.Request, companyID int64, raw json.RawMessage) (int64, error) {
	if string(raw) == "null" {
		return 0, nil
	}
	var id int64
	if err := json.Unmarshal(raw, &id); err != nil || id <= 0 {
		return 0, httpapi.Invalid("assigned_to must be a user id or null")
	}
	u, err := h.store.Tenancy.GetUser(r.Context(), companyID, id)
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && !u.Active) {
		return 0, httpapi.Invalid("assigned_to: no active user %d in the company", id)
	}
	return id, err
}

// triageFilters are the filters of GET /issues a bulk triage takes.
var triageFilters = []string{"project", "repo", "branch", "cwe", "file_path_exact", "urgency", "status"}

// filterQuery reads a body's filters (those of GET /issues) as the list's
// query; an unknown one is 400, an empty value is no filter.
func filterQuery(filters map[string]string) (url.Values, error) {
	q := url.Values{}
	for k, v := range filters {
		if !slices.Contains(triageFilters, k) {
			return nil, httpapi.Invalid("Unknown filter %q (filters: %s)", k, strings.Join(triageFilters, ", "))
		}
		if v != "" {
			q.Set(k, v)
		}
	}
	return q, nil
}

// triage answers POST /issues/triage: one status (and reason) for every
// issue the filters match. Up to store.MaxTriage matches it answers at
// once how many matched and how many changed (a retry changes 0); past
// that it stores a bulk triage operation, which the worker runs
// (shared/bulktriage), and answers 202 with it: GET
// /issues/triage/{operation_id} follows it to its exact counts.
func (h handlers) triage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	var req struct {
		Filters map[string]string `json:"filters"`
		Status  string            `json:"status"`
		Reason  string            `json:"reason"`
		acceptInput
	}
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	status, err := parseStatus(req.Status, findings.ManualStatuses)
	if err != nil {
		return err
	}
	if err := checkReason(req.Reason); err != nil {
		return err
	}
	terms, err := h.terms(r, p.CompanyID, status, &req.Reason, req.acceptInput)
	if err != nil {
		return err
	}
	q, err := filterQuery(req.Filters)
	if err != nil {
		return err
	}
	if len(q) == 0 {
		return httpapi.Invalid("filters must name at least one of %s", strings.Join(triageFilters, ", "))
	}
	f, err := h.issueFilter(ctx, p.CompanyID, q)
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "matched": 0, "changed": 0})
	}
	if err != nil {
		return err
	}
	matched, changed, err := h.store.Triage.TriageIssues(ctx, p.CompanyID, f, status, req.Reason, terms, findings.Actor{UserID: p.UserID})
	var tooMany *storetriage.ErrTooMany
	if errors.As(err, &tooMany) {
		return h.startTriage(w, r, q, f, status, req.Reason, terms)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "matched": matched, "changed": changed})
}

// startTriage stores the operation of a bulk triage too large to answer at
// once, with the acceptance's terms the request gave, and answers 202 with
// it.
func (h handlers) startTriage(w http.ResponseWriter, r *http.Request, q url.Values, f issuelists.IssueFilter, status, reason string, terms schema.Terms) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	query, err := issuelists.EncodeFilter(f)
	if err != nil {
		return err
	}
	op := schema.TriageOpItem{CompanyID: p.CompanyID, UserID: p.UserID, Status: status, Reason: reason, Query: query,
		RiskExpiresAt: terms.ExpiresAt, RiskOwner: terms.Owner}
	if op.Filters, err = filtersJSON(q); err != nil {
		return err
	}
	if op, err = h.store.Triage.CreateTriageOp(ctx, op); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{"status": "ok", "operation": bulktriage.Show(op)})
}

// getTriage answers GET /issues/triage/{operation_id}: the operation's
// state, how many issues it matched, processed and changed so far, and
// once done the exact final counts. Another company's id answers as an
// unknown one.
func (h handlers) getTriage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	op, err := h.store.Triage.GetTriageOp(ctx, p.CompanyID, r.PathValue("operation_id"))
	if errors.Is(err, ddb.ErrNotFound) {
		return errTriageOpNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "operation": bulktriage.Show(op)})
}

var errTriageOpNotFound = httpapi.NotFound("Triage operation not found")

// filtersJSON is a request's filters as an operation keeps them to show
// back.
func filtersJSON(q url.Values) (string, error) {
	filters := map[string]string{}
	for k := range q {
		filters[k] = q.Get(k)
	}
	raw, err := json.Marshal(filters)
	return string(raw), err
}
