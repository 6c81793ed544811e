package tickets

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/netguard"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// Bounds of a Jira integration's members.
const (
	maxName      = 100
	maxEmail     = 254
	maxToken     = 1024
	maxTypeName  = 64
	minSecret    = 16
	maxSecret    = 256
	jiraTypeName = "jira"
)

var projectKeyPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,9}$`)

type jiraJSON struct {
	ID               string `json:"id"` // the uuid, as other uuid-named resources
	UUID             string `json:"uuid"`
	Type             string `json:"type"`
	Name             string `json:"name"`
	SiteURL          string `json:"site_url"`
	Email            string `json:"email"`
	AccountID        string `json:"account_id"`
	AccountName      string `json:"account_name"`
	ProjectKey       string `json:"project_key"`
	IssueType        string `json:"issue_type"`
	DoneTransition   string `json:"done_transition"`
	WontDoTransition string `json:"wont_do_transition"`
	ReopenTransition string `json:"reopen_transition"`
	WebhookSecretSet bool   `json:"webhook_secret_set"`
	CreatedAt        string `json:"created_at"`
	UpdatedAt        string `json:"updated_at"`
}

func viewJira(in schema.JiraIntegration) jiraJSON {
	return jiraJSON{ID: in.UUID, UUID: in.UUID, Type: jiraTypeName, Name: in.Name, SiteURL: in.SiteURL, Email: in.Email, AccountID: in.AccountID,
		AccountName: in.AccountName, ProjectKey: in.ProjectKey, IssueType: in.IssueType, DoneTransition: in.DoneTransition,
		WontDoTransition: in.WontDoTransition, ReopenTransition: in.ReopenTransition, WebhookSecretSet: in.SealedWebhookSecret != "",
		CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
}

type jiraOne struct {
	Status      string   `json:"status"`
	Integration jiraJSON `json:"integration"`
}

// jiraBody is the request body of a create or update; absent members stay.
type jiraBody struct {
	Name             *string `json:"name"`
	SiteURL          *string `json:"site_url"`
	Email            *string `json:"email"`
	APIToken         *string `json:"api_token"`
	ProjectKey       *string `json:"project_key"`
	IssueType        *string `json:"issue_type"`
	DoneTransition   *string `json:"done_transition"`
	WontDoTransition *string `json:"wont_do_transition"`
	ReopenTransition *string `json:"reopen_transition"`
	WebhookSecret    *string `json:"webhook_secret"`
}

func bad(format string, args ...any) error {
	return httpapi.Invalid(format, args...)
}

// text checks an optional one-line member of 1 to max characters.
func text(field string, v *string, max int) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := cleantext.Line(field, strings.TrimSpace(*v))
	if err != nil {
		return nil, bad("%s", err.Error())
	}
	if s == "" || utf8.RuneCountInString(s) > max {
		return nil, bad("%s must hold 1 to %d characters", field, max)
	}
	return &s, nil
}

// clean checks every member given and returns the body normalised.
func (h handlers) clean(b jiraBody) (jiraBody, error) {
	var err error
	for _, f := range []struct {
		name string
		v    **string
		max  int
	}{{"name", &b.Name, maxName}, {"issue_type", &b.IssueType, maxTypeName}, {"done_transition", &b.DoneTransition, maxTypeName},
		{"wont_do_transition", &b.WontDoTransition, maxTypeName}, {"reopen_transition", &b.ReopenTransition, maxTypeName}} {
		if *f.v, err = text(f.name, *f.v, f.max); err != nil {
			return b, err
		}
	}
	if b.SiteURL != nil {
		site, err := ticketing.NormalizeSite(*b.SiteURL, h.loopback)
		if err != nil {
			return b, bad("site_url %s", err.Error())
		}
		b.SiteURL = &site
	}
	if b.Email != nil {
		e, err := cleantext.Email("email", strings.TrimSpace(*b.Email), maxEmail)
		if err != nil {
			return b, bad("%s", err.Error())
		}
		b.Email = &e
	}
	if b.APIToken != nil && (*b.APIToken == "" || len(*b.APIToken) > maxToken || strings.ContainsAny(*b.APIToken, " \t\r\n")) {
		return b, bad("api_token must be 1 to %d characters without spaces", maxToken)
	}
	if b.ProjectKey != nil {
		k := strings.ToUpper(strings.TrimSpace(*b.ProjectKey))
		if !projectKeyPattern.MatchString(k) {
			return b, bad("project_key must be a Jira project key (A-Z, digits, underscores; at most 10 characters)")
		}
		b.ProjectKey = &k
	}
	if b.WebhookSecret != nil && (len(*b.WebhookSecret) < minSecret || len(*b.WebhookSecret) > maxSecret) {
		return b, bad("webhook_secret must be %d to %d characters", minSecret, maxSecret)
	}
	return b, nil
}

// check asks the site who the credentials are and whether the project
// and issue type exist, through the guarded dialer. Every failure is an
// answer naming the field; nothing is stored.
func (h handlers) check(ctx context.Context, site, email, token, projectKey, issueType string) (ticketing.JiraUser, error) {
	c := &ticketing.JiraClient{HTTP: h.jira, Site: site, Email: email, Token: token}
	me, err := c.Myself(ctx)
	var je *ticketing.JiraError
	var blocked *netguard.BlockedAddressError
	switch {
	case errors.As(err, &blocked):
		return me, bad("site_url must not point at a private, loopback, link-local or cloud-metadata address")
	case errors.As(err, &je) && (je.Status == http.StatusUnauthorized || je.Status == http.StatusForbidden):
		return me, httpapi.Unprocessable("api_token: the site refused the credentials (HTTP %d)", je.Status)
	case errors.As(err, &je):
		return me, httpapi.Unprocessable("site_url: the site answered HTTP %d to the credential check", je.Status)
	case err != nil:
		return me, httpapi.Unprocessable("site_url: the site could not be reached")
	case me.AccountID == "":
		return me, httpapi.Unprocessable("site_url: the site's answer is not Jira Cloud's")
	}
	p, err := c.Project(ctx, projectKey)
	switch {
	case errors.As(err, &je) && je.Status == http.StatusNotFound:
		return me, httpapi.Unprocessable("project_key: the site has no project %s this account can see", projectKey)
	case err != nil:
		return me, httpapi.Unprocessable("project_key: the project could not be read")
	}
	if len(p.IssueTypes) > 0 && !hasType(p, issueType) {
		return me, httpapi.Unprocessable("issue_type: project %s has no issue type %q", projectKey, issueType)
	}
	return me, nil
}

func hasType(p ticketing.JiraProject, name string) bool {
	for _, t := range p.IssueTypes {
		if strings.EqualFold(t.Name, name) {
			return true
		}
	}
	return false
}

func (h handlers) createJira(w http.ResponseWriter, r *http.Request) error {
	var b jiraBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	b, err := h.clean(b)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"site_url", b.SiteURL}, {"email", b.Email}, {"api_token", b.APIToken}, {"project_key", b.ProjectKey}} {
		if f.v == nil {
			return bad("%s is required", f.name)
		}
	}
	if b.Name == nil {
		b.Name = ptr("Jira " + *b.ProjectKey)
	}
	if b.IssueType == nil {
		b.IssueType = ptr("Bug")
	}
	ctx := r.Context()
	me, err := h.check(ctx, *b.SiteURL, *b.Email, *b.APIToken, *b.ProjectKey, *b.IssueType)
	if err != nil {
		return err
	}
	p := auth.FromContext(ctx)
	in := schema.JiraIntegration{UUID: catalog.NewIntegrationUUID(), CompanyID: p.CompanyID, Name: *b.Name, SiteURL: *b.SiteURL,
		Email: *b.Email, AccountID: me.AccountID, AccountName: me.DisplayName, ProjectKey: *b.ProjectKey, IssueType: *b.IssueType,
		DoneTransition: deref(b.DoneTransition), WontDoTransition: deref(b.WontDoTransition), ReopenTransition: deref(b.ReopenTransition)}
	if in.SealedToken, err = h.sealer.Seal(ctx, *b.APIToken, storetickets.JiraTokenRecord(p.CompanyID, in.UUID)); err != nil {
		return err
	}
	if b.WebhookSecret != nil {
		if in.SealedWebhookSecret, err = h.sealer.Seal(ctx, *b.WebhookSecret, storetickets.JiraSecretRecord(p.CompanyID, in.UUID)); err != nil {
			return err
		}
	}
	in, err = h.tickets.CreateJira(ctx, in)
	if errors.Is(err, storetickets.ErrLimit) {
		return httpapi.Conflict("A company has at most %d Jira integrations", storetickets.MaxJiraIntegrations)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, jiraOne{Status: "ok", Integration: viewJira(in)})
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type jiraList struct {
	Status       string     `json:"status"`
	Integrations []jiraJSON `json:"integrations"`
}

func (h handlers) listJira(w http.ResponseWriter, r *http.Request) error {
	all, err := h.tickets.ListJira(r.Context(), auth.FromContext(r.Context()).CompanyID)
	if err != nil {
		return err
	}
	out := jiraList{Status: "ok", Integrations: make([]jiraJSON, 0, len(all))}
	for _, in := range all {
		out.Integrations = append(out.Integrations, viewJira(in))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

var errJiraNotFound = httpapi.NotFound("Integration not found")

// loadJira reads the integration the path names, in the caller's company.
func (h handlers) loadJira(r *http.Request) (schema.JiraIntegration, error) {
	id, ok := schema.CanonicalUUID(r.PathValue("integration_uuid"))
	if !ok {
		return schema.JiraIntegration{}, bad("integration_uuid must be a UUID")
	}
	in, err := h.tickets.GetJira(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return in, errJiraNotFound
	}
	return in, err
}

func (h handlers) getJira(w http.ResponseWriter, r *http.Request) error {
	in, err := h.loadJira(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, jiraOne{Status: "ok", Integration: viewJira(in)})
}

func (h handlers) updateJira(w http.ResponseWriter, r *http.Request) error {
	in, err := h.loadJira(r)
	if err != nil {
		return err
	}
	var b jiraBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if b, err = h.clean(b); err != nil {
		return err
	}
	ctx := r.Context()
	ch := storetickets.JiraChange{Name: b.Name, SiteURL: b.SiteURL, Email: b.Email, ProjectKey: b.ProjectKey, IssueType: b.IssueType,
		DoneTransition: b.DoneTransition, WontDoTransition: b.WontDoTransition, ReopenTransition: b.ReopenTransition}
	if err := h.recheck(ctx, in, b, &ch); err != nil {
		return err
	}
	if b.WebhookSecret != nil {
		sealed, err := h.sealer.Seal(ctx, *b.WebhookSecret, storetickets.JiraSecretRecord(in.CompanyID, in.UUID))
		if err != nil {
			return err
		}
		ch.SealedWebhookSecret = &sealed
	}
	out, err := h.tickets.UpdateJira(ctx, in.CompanyID, in.UUID, in.Revision, ch)
	if errors.Is(err, ddb.ErrConflict) {
		return httpapi.Conflict("The integration was changed by another request; read it again and retry")
	}
	if errors.Is(err, ddb.ErrNotFound) {
		return errJiraNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, jiraOne{Status: "ok", Integration: viewJira(out)})
}

// recheck asks the site again when a change touches what the check
// covers (site, credentials, project, issue type), and sets the account
// and the sealed new token on ch. The stored token only ever goes to the
// site it was given for: moving to another site needs api_token.
func (h handlers) recheck(ctx context.Context, in schema.JiraIntegration, b jiraBody, ch *storetickets.JiraChange) error {
	if b.SiteURL == nil && b.Email == nil && b.APIToken == nil && b.ProjectKey == nil && b.IssueType == nil {
		return nil
	}
	if b.SiteURL != nil && *b.SiteURL != in.SiteURL && b.APIToken == nil {
		return bad("api_token is required to change site_url (the stored token is never sent to another site)")
	}
	token := deref(b.APIToken)
	if b.APIToken == nil {
		var err error
		if token, err = h.sealer.Open(ctx, in.SealedToken, storetickets.JiraTokenRecord(in.CompanyID, in.UUID)); err != nil {
			return httpapi.Unprocessable("api_token: the stored token cannot be read; send api_token with the change")
		}
	}
	me, err := h.check(ctx, or(b.SiteURL, in.SiteURL), or(b.Email, in.Email), token, or(b.ProjectKey, in.ProjectKey), or(b.IssueType, in.IssueType))
	if err != nil {
		return err
	}
	if me.AccountID != in.AccountID && b.APIToken == nil && b.Email == nil {
		return httpapi.Unprocessable("site_url: the credentials belong to another account on that site")
	}
	ch.AccountID, ch.AccountName = &me.AccountID, &me.DisplayName
	if b.APIToken != nil {
		sealed, err := h.sealer.Seal(ctx, token, storetickets.JiraTokenRecord(in.CompanyID, in.UUID))
		if err != nil {
			return err
		}
		ch.SealedToken = &sealed
	}
	return nil
}

func or(v *string, stored string) string {
	if v != nil {
		return *v
	}
	return stored
}

type okAnswer struct {
	Status string `json:"status"`
}

func (h handlers) deleteJira(w http.ResponseWriter, r *http.Request) error {
	in, err := h.loadJira(r)
	if err != nil {
		return err
	}
	used, err := h.tickets.RulesUsing(r.Context(), in.CompanyID, in.UUID)
	if err != nil {
		return err
	}
	if used {
		return httpapi.Conflict("Ticket rules send to this integration; delete or change them first")
	}
	if err := h.tickets.DeleteJira(r.Context(), in.CompanyID, in.UUID); errors.Is(err, ddb.ErrNotFound) {
		return errJiraNotFound
	} else if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, okAnswer{Status: "ok"})
}
