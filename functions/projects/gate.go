package projects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// BlockingPageSize is the number of blocking issues per page of the gate.
const BlockingPageSize = 50

// maxBlockOn bounds the slugs of one block_on list.
const maxBlockOn = 50

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
	// Baseline says which findings were judged: null when no baseline
	// branch applies (or while pending).
	Baseline *gate.Summary `json:"baseline"`
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
// issue triggers a rule, with the blocking issues paged by id. Only what
// the scan adds to its baseline branch is judged (see gate.Compare), and
// never what the code suppresses.
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
	baseline, err := gate.BaselineBranch(ctx, gate.Source{Baselines: h.store.Baselines, Scans: h.store.Scans}, sc, proj, baselineParam(r))
	if ub := (*gate.UnknownBaselineError)(nil); errors.As(err, &ub) {
		return badBlockOn(ub.Error(), gate.Selection{})
	}
	if err != nil {
		return err
	}
	all, err := h.store.Catalog.AllBlockingRules(ctx, company)
	if err != nil {
		return err
	}
	sel := gate.Select(all, slugs)
	if !sel.Valid() {
		return badBlockOn("Invalid block_on rule(s).", sel)
	}
	out := gateResponse{Status: "complete", BlockingIssues: []blockingIssueJSON{}, Page: pg.Page, TotalPages: 1}
	if status(sc) == scans.ScanProcessing {
		out.Status = "pending"
		return httpapi.WriteJSON(w, http.StatusOK, out)
	}
	var issues []findings.Issue
	if len(sel.Rules) > 0 || baseline != "" {
		if err := h.store.Lists.EachScanIssue(ctx, company, sc.ID, func(i findings.Issue) error {
			issues = append(issues, i)
			return nil
		}); err != nil {
			return err
		}
	}
	if baseline != "" {
		cmp, err := gate.CompareScan(ctx, gate.Source{Baselines: h.store.Baselines, Scans: h.store.Scans}, sc, baseline, issues)
		if err != nil {
			return err
		}
		issues, out.Baseline = cmp.Counted, &cmp.Summary
	}
	isNew, err := h.newness(ctx, company, sc, proj, sel.Rules, issues)
	if err != nil {
		return err
	}
	blocked := gate.Evaluate(sel.Rules, issues, isNew)
	out.Block = len(blocked) > 0
	out.Stats.BlockedIssues = len(blocked)
	out.TotalPages = max(1, pg.TotalPages(len(blocked)))
	for _, b := range httpapi.Slice(pg, blocked).Items {
		v := blockingIssueJSON{ID: b.IssueID}
		for _, rule := range b.Rules {
			v.TriggeredByRules = append(v.TriggeredByRules, strconv.FormatInt(rule.ID, 10))
			v.TriggeredBySlugs = append(v.TriggeredBySlugs, rule.Slug)
		}
		out.BlockingIssues = append(out.BlockingIssues, v)
	}
	if out.Block {
		ev, err := violation(company, sc, proj, blocked)
		if err != nil {
			return err
		}
		// Once per scan and set of rules, however often the client polls.
		if _, err := h.store.Ledger.RecordEventOnce(ctx, ev); err != nil {
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// baselineParam is the baseline query parameter: nil when absent (the
// project's default branch applies), "" to compare with no branch.
func baselineParam(r *http.Request) *string {
	if !r.URL.Query().Has("baseline") {
		return nil
	}
	b := strings.TrimSpace(r.URL.Query().Get("baseline"))
	return &b
}

// newness answers only_new: a finding of the scan is new when it is not
// open on the project's default branch (a pull request's base branch). On the default branch itself the
// scan made every finding open there, so new means first reported by this
// scan.
func (h handlers) newness(ctx context.Context, company int64, sc scans.Scan, proj schema.Project, rules []schema.BlockingRule, issues []findings.Issue) (func(findings.Issue) bool, error) {
	if !gate.NeedsNewness(rules) {
		return func(findings.Issue) bool { return false }, nil
	}
	def, err := h.projectView(ctx, proj)
	if err != nil {
		return nil, err
	}
	if base := gate.PullRequestBase(sc); base != "" {
		def.DefaultBranch = &base // a pull request is new against its base
	}
	if def.DefaultBranch == nil || *def.DefaultBranch == sc.Branch {
		return func(i findings.Issue) bool { return i.ScanID == sc.ID }, nil
	}
	open, err := h.store.Lists.OpenOnBranch(ctx, company, *def.DefaultBranch, issues)
	if err != nil {
		return nil, err
	}
	return func(i findings.Issue) bool { return !open[i.ID] }, nil
}

// violation is the policy_violation event of a gate check that blocked a
// scan: the rules its issues triggered (ids ascending) and how many
// issues. Its id names the scan and the rules, so every check of the same
// scan and rules is the same event.
func violation(company int64, sc scans.Scan, proj schema.Project, blocked []gate.Blocked) (schema.Event, error) {
	slugs := map[int64]string{}
	for _, b := range blocked {
		for _, r := range b.Rules {
			slugs[r.ID] = r.Slug
		}
	}
	ids := slices.Sorted(maps.Keys(slugs))
	type ruleJSON struct {
		ID   int64  `json:"id"`
		Slug string `json:"slug"`
	}
	rules := make([]ruleJSON, len(ids))
	names := make([]string, len(ids))
	for n, id := range ids {
		rules[n] = ruleJSON{id, slugs[id]}
		names[n] = strconv.FormatInt(id, 10)
	}
	data, err := json.Marshal(map[string]any{"scan_id": sc.ID, "project_id": sc.ProjectID, "project_name": proj.Name,
		"branch": sc.Branch, "count": len(blocked), "rules": rules})
	sum := sha256.Sum256([]byte(strings.Join(names, ",")))
	return schema.Event{ID: "policy_violation-" + sc.ID + "-" + hex.EncodeToString(sum[:8]), CompanyID: company,
		Type: "policy_violation", Data: data}, err
}
