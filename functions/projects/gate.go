package projects

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
)

// BlockingPageSize is the number of blocking issues per page of the gate.
const BlockingPageSize = 50

// maxBlockOn bounds the slugs of one block_on list.
const maxBlockOn = 50

// Violation is one gate check that blocked a scan: the scan, the rules its
// issues triggered (ids ascending) and how many issues. EventID is the
// same for every check of the same scan and rules, so the delivery records
// one policy_violation event however often the client polls.
type Violation struct {
	EventID       string
	CompanyID     int64
	ScanID        string
	ProjectID     int64
	RuleIDs       []int64
	Slugs         []string
	BlockedIssues int
}

// ViolationHook hears violations; the delivery work plugs its outbox in
// here (NewWithHook). An error fails the check with a 500, so the client
// retries (the gate retries 5xx).
type ViolationHook func(ctx context.Context, v Violation) error

type blockingIssueJSON struct {
	ID               string   `json:"id"`
	TriggeredByRules []string `json:"triggered_by_rules"`
	TriggeredBySlugs []string `json:"triggered_by_slugs"`
}

type gateResponse struct {
	Status         string              `json:"status"`
	Block          bool                `json:"block"`
	BlockingIssues []blockingIssueJSON `json:"blocking_issues"`
	Page           int                 `json:"page"`
	TotalPages     int                 `json:"total_pages"`
	Stats          struct {
		BlockedIssues int `json:"blocked_issues"`
	} `json:"stats"`
}

type blockOnError struct {
	Message       string   `json:"message"`
	UnknownSlugs  []string `json:"unknown_slugs"`
	InactiveSlugs []string `json:"inactive_slugs"`
	NonCISlugs    []string `json:"non_ci_slugs"`
}

func badBlockOn(message string, sel gate.Selection) error {
	return &httpapi.Error{Status: http.StatusBadRequest, Body: blockOnError{Message: message,
		UnknownSlugs: httpapi.Array(sel.Unknown), InactiveSlugs: httpapi.Array(sel.Inactive), NonCISlugs: httpapi.Array(sel.NotCI)}}
}

// blockOn reads the block_on slugs: trimmed, lower-cased, each once;
// present but naming none is a 400 in the client's error form.
func blockOn(r *http.Request) ([]string, error) {
	if !r.URL.Query().Has("block_on") {
		return nil, nil
	}
	var out []string
	for _, s := range strings.Split(r.URL.Query().Get("block_on"), ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, badBlockOn("block_on was provided but contained no rule slugs.", gate.Selection{})
	}
	if len(out) > maxBlockOn {
		return nil, badBlockOn(fmt.Sprintf("block_on names more than %d rules.", maxBlockOn), gate.Selection{})
	}
	return out, nil
}

// checkBlockingRules evaluates the selected rules over the scan's issues:
// pending while the scan's findings are not all stored, else whether any
// issue triggers a rule, with the blocking issues paged by id.
func (h handlers) checkBlockingRules(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, BlockingPageSize, BlockingPageSize)
	if err != nil {
		return err
	}
	slugs, err := blockOn(r)
	if err != nil {
		return err
	}
	sc, proj, err := h.scanOf(r)
	if err != nil {
		return err
	}
	all, err := h.store.AllBlockingRules(ctx, company)
	if err != nil {
		return err
	}
	sel := gate.Select(all, slugs)
	if !sel.Valid() {
		return badBlockOn("Invalid block_on rule(s).", sel)
	}
	out := gateResponse{Status: "complete", BlockingIssues: []blockingIssueJSON{}, Page: pg.Page, TotalPages: 1}
	if status(sc) == store.ScanProcessing {
		out.Status = "pending"
		return httpapi.WriteJSON(w, http.StatusOK, out)
	}
	var issues []store.Issue
	if len(sel.Rules) > 0 {
		if err := h.store.EachScanIssue(ctx, company, sc.ID, func(i store.Issue) error {
			issues = append(issues, i)
			return nil
		}); err != nil {
			return err
		}
	}
	isNew, err := h.newness(ctx, company, sc, proj, sel.Rules, issues)
	if err != nil {
		return err
	}
	blocked := gate.Evaluate(sel.Rules, issues, isNew)
	out.Block = len(blocked) > 0
	out.Stats.BlockedIssues = len(blocked)
	out.TotalPages = max(1, pg.TotalPages(len(blocked)))
	for _, b := range httpapi.Slice(pg, blocked) {
		v := blockingIssueJSON{ID: b.IssueID}
		for _, rule := range b.Rules {
			v.TriggeredByRules = append(v.TriggeredByRules, strconv.FormatInt(rule.ID, 10))
			v.TriggeredBySlugs = append(v.TriggeredBySlugs, rule.Slug)
		}
		out.BlockingIssues = append(out.BlockingIssues, v)
	}
	if out.Block && h.violated != nil {
		if err := h.violated(ctx, violation(company, sc, blocked)); err != nil {
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// newness answers only_new: a finding of the scan is new when it is not
// open on the project's default branch. On the default branch itself the
// scan made every finding open there, so new means first reported by this
// scan.
func (h handlers) newness(ctx context.Context, company int64, sc store.Scan, proj store.Project, rules []store.BlockingRule, issues []store.Issue) (func(store.Issue) bool, error) {
	if !gate.NeedsNewness(rules) {
		return func(store.Issue) bool { return false }, nil
	}
	def, err := h.projectView(ctx, proj)
	if err != nil {
		return nil, err
	}
	if def.DefaultBranch == nil || *def.DefaultBranch == sc.Branch {
		return func(i store.Issue) bool { return i.ScanID == sc.ID }, nil
	}
	open, err := h.store.OpenOnBranch(ctx, company, *def.DefaultBranch, issues)
	if err != nil {
		return nil, err
	}
	return func(i store.Issue) bool { return !open[i.ID] }, nil
}

func violation(company int64, sc store.Scan, blocked []gate.Blocked) Violation {
	v := Violation{CompanyID: company, ScanID: sc.ID, ProjectID: sc.ProjectID, BlockedIssues: len(blocked)}
	slugs := map[int64]string{}
	for _, b := range blocked {
		for _, r := range b.Rules {
			slugs[r.ID] = r.Slug
		}
	}
	for id := range slugs {
		v.RuleIDs = append(v.RuleIDs, id)
	}
	slices.Sort(v.RuleIDs)
	ids := make([]string, len(v.RuleIDs))
	for n, id := range v.RuleIDs {
		v.Slugs = append(v.Slugs, slugs[id])
		ids[n] = strconv.FormatInt(id, 10)
	}
	v.EventID = "policy_violation/" + sc.ID + "/" + strings.Join(ids, ",")
	return v
}
