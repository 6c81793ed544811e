package tickets

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// JiraTokenRecord is what a Jira integration's sealed API token is bound to.
func JiraTokenRecord(companyID int64, id string) string {
	return fmt.Sprintf("jira/%d/%s", companyID, id)
}

// JiraSecretRecord is what its sealed webhook secret is bound to.
func JiraSecretRecord(companyID int64, id string) string {
	return fmt.Sprintf("jira-webhook/%d/%s", companyID, id)
}

// CreateJira stores a new Jira integration (in.UUID set, canonical) with
// its global look-up by uuid and its audit entry, in one transaction;
// ErrLimit past MaxJiraIntegrations.
func (s *Tickets) CreateJira(ctx context.Context, in schema.JiraIntegration) (schema.JiraIntegration, error) {
	if id, ok := schema.CanonicalUUID(in.UUID); !ok || id != in.UUID {
		return schema.JiraIntegration{}, fmt.Errorf("jira integration uuid %q: %w", in.UUID, ddb.ErrInvalid)
	}
	all, err := s.ListJira(ctx, in.CompanyID)
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	if len(all) >= MaxJiraIntegrations {
		return schema.JiraIntegration{}, ErrLimit
	}
	in.Key = schema.JiraIntegrationKey(in.CompanyID, in.UUID)
	in.Revision, in.CreatedAt = 1, s.t.Stamp()
	in.UpdatedAt = in.CreatedAt
	put, err := s.t.TxPutNew(in)
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	ref, err := s.t.TxPutNew(schema.JiraHookRef{Key: schema.JiraHookKey(in.UUID), CompanyID: in.CompanyID, UUID: in.UUID})
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	audit, err := s.audit(ctx, in.CompanyID, "jira_integration.create", "jira_integration", in.UUID, map[string]ledger.Change{
		"site_url": {After: in.SiteURL}, "email": {After: in.Email}, "project_key": {After: in.ProjectKey},
		"issue_type": {After: in.IssueType}, "api_token": {After: ledger.Secret},
	})
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	return in, s.t.Transact(ctx, append([]types.TransactWriteItem{put, ref}, audit...))
}

// GetJira reads a Jira integration of a company.
func (s *Tickets) GetJira(ctx context.Context, companyID int64, id string) (schema.JiraIntegration, error) {
	var in schema.JiraIntegration
	return in, s.t.GetItem(ctx, schema.JiraIntegrationKey(companyID, id), &in)
}

// ListJira reads a company's Jira integrations, by uuid (at most
// MaxJiraIntegrations).
func (s *Tickets) ListJira(ctx context.Context, companyID int64) ([]schema.JiraIntegration, error) {
	out := []schema.JiraIntegration{}
	kc := expression.Key("PK").Equal(expression.Value(schema.JiraIntegrationPK(companyID)))
	return out, s.t.QueryAllConsistent(ctx, kc, &out)
}

// JiraByHook finds a Jira integration by uuid alone (the inbound route).
func (s *Tickets) JiraByHook(ctx context.Context, id string) (schema.JiraIntegration, error) {
	var ref schema.JiraHookRef
	if err := s.t.GetItem(ctx, schema.JiraHookKey(id), &ref); err != nil {
		return schema.JiraIntegration{}, err
	}
	return s.GetJira(ctx, ref.CompanyID, id)
}

// JiraChange lists what an update sets; nil keeps a value.
type JiraChange struct {
	Name, SiteURL, Email, SealedToken, AccountID, AccountName *string
	ProjectKey, IssueType, DoneTransition, WontDoTransition   *string
	ReopenTransition, SealedWebhookSecret                     *string
}

// UpdateJira applies ch, conditional on revision (ErrConflict otherwise),
// with its audit entry.
func (s *Tickets) UpdateJira(ctx context.Context, companyID int64, id string, revision int64, ch JiraChange) (schema.JiraIntegration, error) {
	var in schema.JiraIntegration
	if err := s.t.GetItemConsistent(ctx, schema.JiraIntegrationKey(companyID, id), &in); err != nil {
		return schema.JiraIntegration{}, err
	}
	if in.Revision != revision {
		return schema.JiraIntegration{}, ddb.ErrConflict
	}
	out := in
	out.Revision, out.UpdatedAt = revision+1, s.t.Stamp()
	upd := expression.Set(expression.Name("revision"), expression.Value(out.Revision)).
		Set(expression.Name("updated_at"), expression.Value(out.UpdatedAt))
	changes := map[string]ledger.Change{}
	set := func(name string, v *string, field *string, secret bool) {
		if v == nil {
			return
		}
		upd = upd.Set(expression.Name(name), expression.Value(*v))
		if *v != *field {
			changes[name] = ledger.Change{Before: *field, After: *v}
			if secret {
				changes[name] = ledger.Change{Before: ledger.Secret, After: ledger.Secret}
			}
		}
		*field = *v
	}
	set("name", ch.Name, &out.Name, false)
	set("site_url", ch.SiteURL, &out.SiteURL, false)
	set("email", ch.Email, &out.Email, false)
	set("sealed_token", ch.SealedToken, &out.SealedToken, true)
	set("account_id", ch.AccountID, &out.AccountID, false)
	set("account_name", ch.AccountName, &out.AccountName, false)
	set("project_key", ch.ProjectKey, &out.ProjectKey, false)
	set("issue_type", ch.IssueType, &out.IssueType, false)
	set("done_transition", ch.DoneTransition, &out.DoneTransition, false)
	set("wont_do_transition", ch.WontDoTransition, &out.WontDoTransition, false)
	set("reopen_transition", ch.ReopenTransition, &out.ReopenTransition, false)
	set("sealed_webhook_secret", ch.SealedWebhookSecret, &out.SealedWebhookSecret, true)
	cond := expression.Name("revision").Equal(expression.Value(revision))
	item, err := s.t.TxUpdate(in.Key, upd, &cond)
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	audit, err := s.audit(ctx, companyID, "jira_integration.update", "jira_integration", id, changes)
	if err != nil {
		return schema.JiraIntegration{}, err
	}
	return out, s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
}

// DeleteJira deletes a Jira integration and its look-up, audited;
// ErrNotFound when the company has none of that uuid.
func (s *Tickets) DeleteJira(ctx context.Context, companyID int64, id string) error {
	if _, err := s.GetJira(ctx, companyID, id); err != nil {
		return err
	}
	del, err := s.t.TxDelete(schema.JiraIntegrationKey(companyID, id), expression.AttributeExists(expression.Name("PK")))
	if err != nil {
		return err
	}
	audit, err := s.audit(ctx, companyID, "jira_integration.delete", "jira_integration", id, nil)
	if err != nil {
		return err
	}
	items := append([]types.TransactWriteItem{del, s.t.TxDeleteKey(schema.JiraHookKey(id))}, audit...)
	if err := s.t.Transact(ctx, items); errors.Is(err, ddb.ErrConflict) {
		return ddb.ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}
