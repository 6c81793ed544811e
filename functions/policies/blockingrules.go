package policies

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// slugPattern is what a rule slug looks like: what CI users type after
// --block-on (lower-case letters, digits, '-' and '_', 1 to 64).
var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

var errRuleNotFound = httpapi.NotFound("Blocking rule not found")

type ruleRequest struct {
	Slug       *string          `json:"slug"`
	Name       *string          `json:"name"`
	Active     *bool            `json:"active"`
	CI         *bool            `json:"ci"`
	Conditions *gate.Conditions `json:"conditions"`
}

type ruleJSON struct {
	ID         string    `json:"id"`
	Slug       string    `json:"slug"`
	Name       string    `json:"name"`
	Active     bool      `json:"active"`
	CI         bool      `json:"ci"`
	Conditions gate.View `json:"conditions"`
	CreatedAt  string    `json:"created_at"`
	UpdatedAt  string    `json:"updated_at"`
}

// ruleView is the API form of a rule; its id is a string, as the gate's
// triggered_by_rules names it.
func ruleView(r schema.BlockingRule) ruleJSON {
	return ruleJSON{ID: strconv.FormatInt(r.ID, 10), Slug: r.Slug, Name: r.Name, Active: r.Active, CI: r.CI,
		Conditions: gate.Show(r.Conditions), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

type ruleResponse struct {
	Status string   `json:"status"`
	Rule   ruleJSON `json:"rule"`
}

// apply validates the members present in req onto r.
func apply(req ruleRequest, r *schema.BlockingRule) error {
	if req.Slug != nil {
		slug := strings.ToLower(strings.TrimSpace(*req.Slug))
		if !slugPattern.MatchString(slug) {
			return bad("slug must be 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit")
		}
		r.Slug = slug
	}
	if req.Name != nil {
		name, err := text("name", req.Name, "", maxPolicyName, true)
		if err != nil {
			return err
		}
		r.Name = name
	}
	if req.Active != nil {
		r.Active = *req.Active
	}
	if req.CI != nil {
		r.CI = *req.CI
	}
	if req.Conditions != nil {
		c, err := gate.Parse(*req.Conditions)
		if err != nil {
			return bad("%s", err.Error())
		}
		r.Conditions = c
	}
	return nil
}

func slugTaken(slug string) error {
	return httpapi.Conflict("A blocking rule with slug %q exists", slug)
}

// createRule stores a new rule: slug and name required; active and ci
// default to true, absent conditions hold for every issue.
func (h handlers) createRule(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req ruleRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Slug == nil || req.Name == nil {
		return bad("slug and name are required")
	}
	rule := schema.BlockingRule{CompanyID: p.CompanyID, Active: true, CI: true}
	if err := apply(req, &rule); err != nil {
		return err
	}
	created, err := h.store.Catalog.CreateBlockingRule(r.Context(), rule)
	if errors.Is(err, ddb.ErrConflict) {
		return slugTaken(rule.Slug)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, ruleResponse{Status: "ok", Rule: ruleView(created)})
}

func (h handlers) ruleOf(r *http.Request) (schema.BlockingRule, error) {
	id, err := httpapi.PathInt(r, "rule_id")
	if err != nil {
		return schema.BlockingRule{}, err
	}
	rule, err := h.store.Catalog.GetBlockingRule(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return rule, errRuleNotFound
	}
	return rule, err
}

func (h handlers) getRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.ruleOf(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ruleResponse{Status: "ok", Rule: ruleView(rule)})
}

// patchRule changes the members given; conditions, when given, replace
// the rule's conditions as a whole.
func (h handlers) patchRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.ruleOf(r)
	if err != nil {
		return err
	}
	var req ruleRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	oldSlug := rule.Slug
	if err := apply(req, &rule); err != nil {
		return err
	}
	updated, err := h.store.Catalog.UpdateBlockingRule(r.Context(), oldSlug, rule)
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return errRuleNotFound
	case errors.Is(err, ddb.ErrConflict) && rule.Slug != oldSlug:
		return slugTaken(rule.Slug)
	case errors.Is(err, ddb.ErrConflict):
		return httpapi.Conflict("The blocking rule was changed by another request; read it again and retry")
	case err != nil:
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ruleResponse{Status: "ok", Rule: ruleView(updated)})
}

func (h handlers) deleteRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.ruleOf(r)
	if err != nil {
		return err
	}
	err = h.store.Catalog.DeleteBlockingRule(r.Context(), rule.CompanyID, rule.ID)
	if errors.Is(err, ddb.ErrNotFound) {
		return errRuleNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ruleResponse{Status: "ok", Rule: ruleView(rule)})
}

func (h handlers) listRules(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	page, err := h.store.Catalog.ListBlockingRules(r.Context(), p.CompanyID, pg.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, httpapi.Numbered("rules", "total_rules"), storepage.Map(page, ruleView))
}
