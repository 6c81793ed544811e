package tickets

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Bounds of a rule's labels.
const (
	maxLabels   = 10
	maxLabelLen = 50
)

var (
	repoPattern  = regexp.MustCompile(`^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$`)
	labelPattern = regexp.MustCompile(`^[^\s,]{1,50}$`)
)

// matcherBody is the triage rules' matcher and new_on_default_branch.
type matcherBody struct {
	triagemodel.MatcherBody
	NewOnDefaultBranch *bool `json:"new_on_default_branch"`
}

type destinationBody struct {
	Kind        *string `json:"kind"`
	Integration *string `json:"integration_uuid"`
	Repository  *string `json:"repository"`
}

type ruleBody struct {
	ProjectID   *int64           `json:"project_id"`
	Matcher     *matcherBody     `json:"matcher"`
	Destination *destinationBody `json:"destination"`
	Grouping    *string          `json:"grouping"`
	Labels      *[]string        `json:"labels"`
}

type matcherJSON struct {
	triagemodel.MatcherView
	NewOnDefaultBranch bool `json:"new_on_default_branch"`
}

type destinationJSON struct {
	Kind        string `json:"kind"`
	Integration string `json:"integration_uuid"`
	Repository  string `json:"repository,omitempty"`
}

type ruleJSON struct {
	ID          string          `json:"id"`
	ProjectID   *int64          `json:"project_id"`
	Matcher     matcherJSON     `json:"matcher"`
	Destination destinationJSON `json:"destination"`
	Grouping    string          `json:"grouping"`
	Labels      []string        `json:"labels"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
}

func viewRule(r schema.TicketRule) ruleJSON {
	v := triagemodel.Show(r.Matcher.Matcher, triagemodel.Action{})
	out := ruleJSON{ID: r.ID, Matcher: matcherJSON{MatcherView: v.Matcher, NewOnDefaultBranch: r.Matcher.NewOnDefaultBranch},
		Destination: destinationJSON{Kind: r.Destination.Kind, Integration: r.Destination.Integration, Repository: r.Destination.Repository},
		Grouping:    r.Grouping, Labels: httpapi.Array(r.Labels), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.ProjectID != 0 {
		out.ProjectID = &r.ProjectID
	}
	return out
}

type ruleOne struct {
	Status string   `json:"status"`
	Rule   ruleJSON `json:"rule"`
}

// parseMatcher checks a matcher with the triage rules' own checks (an
// empty one matches every finding).
func parseMatcher(b *matcherBody) (schema.TicketMatcher, error) {
	if b == nil {
		return schema.TicketMatcher{}, bad("matcher is required")
	}
	var out schema.TicketMatcher
	mb := b.MatcherBody
	if mb.Tool != nil || mb.RuleID != nil || mb.Path != nil || mb.Package != nil || mb.Ecosystem != nil ||
		mb.UrgencyAtLeast != nil || mb.UrgencyAtMost != nil || (len(mb.CWE) > 0 && string(mb.CWE) != "null") {
		// The triage rules' parser checks the matcher beside an action;
		// a fixed valid action lets it check the matcher alone.
		m, _, err := triagemodel.Parse(triagemodel.Body{Matcher: &b.MatcherBody, Action: &triagemodel.ActionBody{Urgency: ptr("CR")}}, time.Time{})
		if err != nil {
			return out, bad("%s", err.Error())
		}
		out.Matcher = m
	}
	if b.NewOnDefaultBranch != nil {
		out.NewOnDefaultBranch = *b.NewOnDefaultBranch
	}
	return out, nil
}

// destination checks a destination: its integration must be the caller
// company's (another company's answers as a missing one).
func (h handlers) destination(ctx context.Context, companyID int64, b *destinationBody) (schema.TicketDestination, error) {
	if b == nil || b.Kind == nil || b.Integration == nil {
		return schema.TicketDestination{}, bad("destination needs kind and integration_uuid")
	}
	id, ok := schema.CanonicalUUID(*b.Integration)
	if !ok {
		return schema.TicketDestination{}, bad("destination.integration_uuid must be a UUID")
	}
	missing := bad("destination.integration_uuid names no %s integration of this company", *b.Kind)
	switch *b.Kind {
	case ticketing.SystemGitHub:
		if b.Repository == nil || !repoPattern.MatchString(*b.Repository) {
			return schema.TicketDestination{}, bad("destination.repository must be owner/repo")
		}
		if _, err := h.store.Catalog.GetIntegration(ctx, companyID, id); errors.Is(err, ddb.ErrNotFound) {
			return schema.TicketDestination{}, missing
		} else if err != nil {
			return schema.TicketDestination{}, err
		}
		return schema.TicketDestination{Kind: *b.Kind, Integration: id, Repository: *b.Repository}, nil
	case ticketing.SystemJira:
		if b.Repository != nil {
			return schema.TicketDestination{}, bad("destination.repository is only for kind github")
		}
		if _, err := h.tickets.GetJira(ctx, companyID, id); errors.Is(err, ddb.ErrNotFound) {
			return schema.TicketDestination{}, missing
		} else if err != nil {
			return schema.TicketDestination{}, err
		}
		return schema.TicketDestination{Kind: *b.Kind, Integration: id}, nil
	}
	return schema.TicketDestination{}, bad("destination.kind must be github or jira")
}

func labels(b *[]string) ([]string, error) {
	if b == nil {
		return nil, nil
	}
	if len(*b) > maxLabels {
		return nil, bad("labels holds at most %d labels", maxLabels)
	}
	out := []string{}
	for _, l := range *b {
		l = strings.TrimSpace(l)
		if !labelPattern.MatchString(l) {
			return nil, bad("labels must be 1 to %d characters without spaces or commas", maxLabelLen)
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// apply checks b's members onto r (absent members keep r's).
func (h handlers) apply(ctx context.Context, r *schema.TicketRule, b ruleBody, create bool) error {
	if create && (b.Matcher == nil || b.Destination == nil) {
		return bad("matcher and destination are required")
	}
	if b.ProjectID != nil {
		if *b.ProjectID <= 0 {
			return bad("project_id must be a positive id")
		}
		if _, err := h.store.Catalog.GetProject(ctx, r.CompanyID, *b.ProjectID); errors.Is(err, ddb.ErrNotFound) {
			return bad("project_id names no project of this company")
		} else if err != nil {
			return err
		}
		r.ProjectID = *b.ProjectID
	}
	var err error
	if b.Matcher != nil {
		if r.Matcher, err = parseMatcher(b.Matcher); err != nil {
			return err
		}
	}
	if b.Destination != nil {
		if r.Destination, err = h.destination(ctx, r.CompanyID, b.Destination); err != nil {
			return err
		}
	}
	if b.Grouping != nil {
		if !slices.Contains(ticketing.Groupings, *b.Grouping) {
			return bad("grouping must be one of %s", strings.Join(ticketing.Groupings, ", "))
		}
		r.Grouping = *b.Grouping
	}
	if r.Grouping == "" {
		r.Grouping = ticketing.GroupFinding
	}
	if r.Grouping == ticketing.GroupCWE && ticketing.SCARule(*r) {
		// SCA findings name a CWE only now and then (CycloneDX's cwes):
		// grouping them by it would put most in one "CWE-0" ticket.
		return bad("grouping cwe does not apply to SCA findings (a rule naming matcher.package or matcher.ecosystem); use package, rule or finding")
	}
	if b.Labels != nil {
		if r.Labels, err = labels(b.Labels); err != nil {
			return err
		}
	}
	return nil
}

func (h handlers) createRule(w http.ResponseWriter, r *http.Request) error {
	var b ruleBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	ctx := r.Context()
	rule := schema.TicketRule{CompanyID: auth.FromContext(ctx).CompanyID}
	if err := h.apply(ctx, &rule, b, true); err != nil {
		return err
	}
	rule, err := h.tickets.CreateRule(ctx, rule)
	if errors.Is(err, storetickets.ErrLimit) {
		return httpapi.Conflict("A company has at most %d ticket rules", storetickets.MaxRules)
	} else if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, ruleOne{Status: "ok", Rule: viewRule(rule)})
}

type ruleList struct {
	Status string     `json:"status"`
	Rules  []ruleJSON `json:"rules"`
}

func (h handlers) listRules(w http.ResponseWriter, r *http.Request) error {
	all, err := h.tickets.ListRules(r.Context(), auth.FromContext(r.Context()).CompanyID)
	if err != nil {
		return err
	}
	out := ruleList{Status: "ok", Rules: make([]ruleJSON, 0, len(all))}
	for _, rule := range all {
		out.Rules = append(out.Rules, viewRule(rule))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

var errRuleNotFound = httpapi.NotFound("Ticket rule not found")

func (h handlers) loadRule(r *http.Request) (schema.TicketRule, error) {
	id, ok := schema.CanonicalUUID(r.PathValue("rule_id"))
	if !ok {
		return schema.TicketRule{}, bad("rule_id must be a UUID")
	}
	rule, err := h.tickets.GetRule(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return rule, errRuleNotFound
	}
	return rule, err
}

func (h handlers) getRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.loadRule(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ruleOne{Status: "ok", Rule: viewRule(rule)})
}

func (h handlers) updateRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.loadRule(r)
	if err != nil {
		return err
	}
	var b ruleBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if err := h.apply(r.Context(), &rule, b, false); err != nil {
		return err
	}
	rule, err = h.tickets.ReplaceRule(r.Context(), rule)
	switch {
	case errors.Is(err, ddb.ErrConflict):
		return httpapi.Conflict("The rule was changed by another request; read it again and retry")
	case errors.Is(err, ddb.ErrNotFound):
		return errRuleNotFound
	case err != nil:
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ruleOne{Status: "ok", Rule: viewRule(rule)})
}

func (h handlers) deleteRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := h.loadRule(r)
	if err != nil {
		return err
	}
	if err := h.tickets.DeleteRule(r.Context(), rule.CompanyID, rule.ID); errors.Is(err, ddb.ErrNotFound) {
		return errRuleNotFound
	} else if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, okAnswer{Status: "ok"})
}
