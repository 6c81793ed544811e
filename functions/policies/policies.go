// Package policies manages a company's scanning policies (created, listed,
// read, deactivated: deactivation keeps the record and is idempotent) and
// its blocking rules, the CI gate's conditions.
package policies

import (
	"errors"
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

type handlers struct {
	store Store
	now   func() time.Time // when a triage rule is written (an acceptance's expiry is bounded from it)
}

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store), now: d.Clock()}
	return d.Server.Group(routes.GroupPolicies, map[string]httpapi.HandlerFunc{
		"DELETE /policies/{policy_id}":         h.deactivate,
		"POST /policies":                       h.create,
		"GET /policies":                        h.list,
		"GET /policies/{policy_id}":            h.get,
		"POST /blocking-rules":                 h.createRule,
		"GET /blocking-rules":                  h.listRules,
		"GET /blocking-rules/{rule_id}":        h.getRule,
		"PATCH /blocking-rules/{rule_id}":      h.patchRule,
		"DELETE /blocking-rules/{rule_id}":     h.deleteRule,
		"POST /triage-rules":                   h.createTriageRule,
		"GET /triage-rules":                    h.listTriageRules,
		"GET /triage-rules/{rule_id}":          h.getTriageRule,
		"PATCH /triage-rules/{rule_id}":        h.patchTriageRule,
		"DELETE /triage-rules/{rule_id}":       h.deleteTriageRule,
		"POST /triage-rules/{rule_id}/approve": h.approveTriageRule,
		"POST /triage-rules/{rule_id}/apply":   h.applyTriageRule,
	})
}

var errNotFound = httpapi.NotFound("Policy not found")

func (h handlers) deactivate(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "policy_id")
	if err != nil {
		return err
	}
	pol, err := h.store.Catalog.DeactivatePolicy(r.Context(), p.CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, response{Status: "ok", Policy: view(pol)})
}

type response struct {
	Status string     `json:"status"`
	Policy policyJSON `json:"policy"`
}

type policyJSON struct {
	ID               int64    `json:"id"`
	PolicyType       string   `json:"policy_type"`
	Description      string   `json:"description"`
	CWEs             []string `json:"cwes"`
	Excludes         []string `json:"excludes"`
	Projects         []string `json:"projects"`
	Company          int64    `json:"company"`
	Active           bool     `json:"active"`
	Approved         bool     `json:"approved"`
	ApprovedBy       *int64   `json:"approved_by"`
	CreatedAt        string   `json:"created_at"`
	GlobPattern      string   `json:"glob_pattern"`
	SourceType       string   `json:"source_type"`
	RepoPolicyFile   *int64   `json:"repo_policy_file"`
	Name             string   `json:"name"`
	GuidanceText     string   `json:"guidance_text"`
	Version          int64    `json:"version"`
	Archived         bool     `json:"archived"`
	ParentPolicy     *int64   `json:"parent_policy"`
	InstructionType  string   `json:"instruction_type"`
	ReadOnly         bool     `json:"read_only"`
	CreatedByService bool     `json:"created_by_service"`
}

// view is the API form of a policy: every field of the spec, with null for
// an absent approver, repository policy file or parent.
func view(p schema.Policy) policyJSON {
	return policyJSON{
		ID: p.ID, PolicyType: p.PolicyType, Description: p.Description,
		CWEs: httpapi.Array(p.CWEs), Excludes: httpapi.Array(p.Excludes), Projects: httpapi.Array(p.Projects),
		Company: p.CompanyID, Active: p.Active, Approved: p.Approved, ApprovedBy: p.ApprovedBy,
		CreatedAt: p.CreatedAt, GlobPattern: p.GlobPattern, SourceType: p.SourceType,
		RepoPolicyFile: p.RepoPolicyFile, Name: p.Name, GuidanceText: p.GuidanceText,
		Version: p.Version, Archived: p.Archived, ParentPolicy: p.ParentPolicy,
		InstructionType: p.InstructionType, ReadOnly: p.ReadOnly, CreatedByService: p.CreatedByService,
	}
}
