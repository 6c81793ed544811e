package policies

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/pathglob"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Limits of a policy's fields and of the lists.
const (
	maxPolicyName   = 200
	maxPolicyText   = 10_000 // description, guidance_text
	maxPolicyList   = 100    // cwes, excludes, projects
	maxPolicyItem   = 500    // one entry of excludes or projects, glob_pattern
	maxPolicyWord   = 50     // policy_type, source_type, instruction_type
	DefaultPageSize = 20
	MaxPageSize     = 100
)

type createPolicyRequest struct {
	Name            *string  `json:"name"`
	Description     *string  `json:"description"`
	GuidanceText    *string  `json:"guidance_text"`
	PolicyType      *string  `json:"policy_type"`
	SourceType      *string  `json:"source_type"`
	InstructionType *string  `json:"instruction_type"`
	GlobPattern     *string  `json:"glob_pattern"`
	CWEs            []string `json:"cwes"`
	Excludes        []string `json:"excludes"`
	Projects        []string `json:"projects"`
	Active          *bool    `json:"active"`
}

func bad(format string, args ...any) error {
	return httpapi.Invalid(format, args...)
}

// text returns a trimmed optional member, def when absent, checking its
// length (required: absent or empty is an error).
func text(name string, v *string, def string, maxLen int, required bool) (string, error) {
	out := def
	if v != nil {
		out = strings.TrimSpace(*v)
	}
	switch {
	case required && out == "":
		return "", bad("%s is required", name)
	case utf8.RuneCountInString(out) > maxLen:
		return "", bad("%s is longer than %d characters", name, maxLen)
	}
	return out, nil
}

func list(name string, in []string) ([]string, error) {
	if len(in) > maxPolicyList {
		return nil, bad("%s may hold at most %d entries", name, maxPolicyList)
	}
	var out []string
	for _, v := range in {
		v = strings.TrimSpace(v)
		if v == "" || utf8.RuneCountInString(v) > maxPolicyItem {
			return nil, bad("%s entries must hold 1 to %d characters", name, maxPolicyItem)
		}
		out = append(out, v)
	}
	return out, nil
}

// create stores a new active, unapproved policy (version 1).
func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req createPolicyRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	pol := schema.Policy{CompanyID: p.CompanyID, Active: true, Version: 1}
	var err error
	for _, f := range []struct {
		name     string
		v        *string
		def      string
		max      int
		required bool
		dst      *string
	}{
		{"name", req.Name, "", maxPolicyName, true, &pol.Name},
		{"description", req.Description, "", maxPolicyText, false, &pol.Description},
		{"guidance_text", req.GuidanceText, "", maxPolicyText, false, &pol.GuidanceText},
		{"policy_type", req.PolicyType, "BLAST", maxPolicyWord, true, &pol.PolicyType},
		{"source_type", req.SourceType, "Web", maxPolicyWord, true, &pol.SourceType},
		{"instruction_type", req.InstructionType, "overwrite", maxPolicyWord, true, &pol.InstructionType},
		{"glob_pattern", req.GlobPattern, "", maxPolicyItem, false, &pol.GlobPattern},
	} {
		if *f.dst, err = text(f.name, f.v, f.def, f.max, f.required); err != nil {
			return err
		}
	}
	if pol.GlobPattern != "" {
		if err := pathglob.Valid(pol.GlobPattern); err != nil {
			return bad("glob_pattern is %v", err)
		}
	}
	if req.Active != nil {
		pol.Active = *req.Active
	}
	if pol.Excludes, err = list("excludes", req.Excludes); err != nil {
		return err
	}
	if pol.Projects, err = list("projects", req.Projects); err != nil {
		return err
	}
	if len(req.CWEs) > maxPolicyList {
		return bad("cwes may hold at most %d entries", maxPolicyList)
	}
	conds, err := gate.Parse(gate.Conditions{CWEs: req.CWEs})
	if err != nil {
		return bad("%s", strings.TrimPrefix(err.Error(), "conditions."))
	}
	for _, n := range conds.CWEs {
		pol.CWEs = append(pol.CWEs, fmt.Sprintf("CWE-%d", n))
	}
	created, err := h.store.Catalog.CreatePolicy(r.Context(), pol)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, response{Status: "ok", Policy: view(created)})
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "policy_id")
	if err != nil {
		return err
	}
	pol, err := h.store.Catalog.GetPolicy(r.Context(), p.CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, response{Status: "ok", Policy: view(pol)})
}

// list pages the company's policies by id (page/page_size, or the cursor
// next_page_token, also taken as page_token).
func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	page, err := h.store.Catalog.ListPolicies(r.Context(), p.CompanyID, pg.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, httpapi.Numbered("policies", "total_policies"), storepage.Map(page, view))
}
