package catalog

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// IntegrationTokenRecord is what an integration's sealed token is bound to
// (see secrets.Sealer): a sealed token copied to another record won't open.
func IntegrationTokenRecord(companyID int64, id string) string {
	return fmt.Sprintf("integration/%d/%s", companyID, id)
}

// NewIntegrationUUID returns a random (version 4) uuid. Callers that seal the
// token bind it to the uuid, so they need it before CreateIntegration.
func NewIntegrationUUID() string { return uuid.NewString() }

// CreateIntegration stores a new integration with the next integration id.
// in.UUID must be set (NewIntegrationUUID).
func (s *Catalog) CreateIntegration(ctx context.Context, in schema.Integration) (schema.Integration, error) {
	// Only the canonical form: reads look the uuid up canonicalised, and the
	// sealed token is bound to the uuid exactly as given.
	if id, ok := schema.CanonicalUUID(in.UUID); !ok || id != in.UUID {
		return schema.Integration{}, fmt.Errorf("integration uuid %q is not a canonical uuid", in.UUID)
	}
	id, err := s.l.NextID(ctx, "integration")
	if err != nil {
		return schema.Integration{}, err
	}
	in.ID = id
	in.Prepare()
	in.CreatedAt = s.t.Stamp()
	in.UpdatedAt = in.CreatedAt
	item, err := s.t.TxPutNew(in)
	if err != nil {
		return schema.Integration{}, err
	}
	counter, err := s.l.TxCount(in.CompanyID, schema.CountIntegrations, 1)
	if err != nil {
		return schema.Integration{}, err
	}
	return in, s.t.Transact(ctx, []types.TransactWriteItem{item, counter})
}

// GetIntegration reads an integration of a company by uuid.
func (s *Catalog) GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error) {
	var in schema.Integration
	err := s.t.GetItem(ctx, schema.IntegrationKey(companyID, id), &in)
	return in, err
}

func IntegrationList(companyID int64) page.List {
	return page.List{Index: tabledef.GSI1, Partition: schema.IntegrationListPK(companyID), Forward: true,
		OffsetPartition: schema.IntegrationListPK(companyID)}
}

// ListIntegrations reads one page of a company's integrations by id, with
// the company's total.
func (s *Catalog) ListIntegrations(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Integration], error) {
	return counted.Page[schema.Integration](ctx, s.t, s.l, companyID, IntegrationList(companyID), q, schema.CountIntegrations)
}

// IntegrationCount is the number of a company's integrations (a counter
// kept on write).
func (s *Catalog) IntegrationCount(ctx context.Context, companyID int64) (int, error) {
	return s.l.CompanyCount(ctx, companyID, schema.CountIntegrations)
}

// AllIntegrations returns every integration of a company, by id (the naive
// baseline of the bench; handlers read pages).
func (s *Catalog) AllIntegrations(ctx context.Context, companyID int64) ([]schema.Integration, error) {
	var out []schema.Integration
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(schema.IntegrationListPK(companyID)))
	err := s.t.QueryAll(ctx, tabledef.GSI1.Name, kc, true, &out)
	return out, err
}

// setProvider adds a change of the host's kind to an update: an unset
// provider is GitHub's, so setting "github" on it changes nothing.
func setProvider(upd *expression.UpdateBuilder, p *string, out *schema.Integration, changes map[string]ledger.Change) {
	if p == nil {
		return
	}
	if before := out.HostProvider(); before != *p {
		changes["provider"] = ledger.Change{Before: before, After: *p}
	}
	*upd = upd.Set(expression.Name("provider"), expression.Value(*p))
	out.Provider = *p
}

// IntegrationChange lists the attributes an update sets; nil keeps a value.
type IntegrationChange struct {
	Name          *string
	OrgAllowlist  *[]string
	BaseURL       *string
	GatewayPrefix *string
	// Provider changes the host's kind (ProviderGitHub, ProviderGitLab).
	Provider    *string
	SealedToken *string
	AccountName *string
	// SealedWebhookSecret sets the secret inbound deliveries are signed
	// with (sealed, bound to IntegrationWebhookRecord), and the global
	// look-up that lets the inbound route find the company by uuid.
	SealedWebhookSecret *string
	// InlineComments replaces the setting of inline review comments.
	InlineComments *schema.InlineComments
	// Verified records a successful credential check: expired becomes false.
	Verified bool
}

// UpdateIntegration applies ch in one write, in a transaction with its audit
// entry, only if the stored revision is still revision (ddb.ErrConflict
// otherwise; ddb.ErrNotFound if the item is gone), and returns the new record.
func (s *Catalog) UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch IntegrationChange) (schema.Integration, error) {
	var in schema.Integration
	if err := s.t.GetItemConsistent(ctx, schema.IntegrationKey(companyID, id), &in); err != nil {
		return schema.Integration{}, err
	}
	if in.Revision != revision {
		return schema.Integration{}, ddb.ErrConflict
	}
	out := in
	out.Revision, out.UpdatedAt = revision+1, s.t.Stamp()
	upd := expression.Set(expression.Name("revision"), expression.Value(out.Revision)).
		Set(expression.Name("updated_at"), expression.Value(out.UpdatedAt))
	changes := map[string]ledger.Change{}
	set := func(name string, v *string, field *string) {
		if v == nil {
			return
		}
		upd = upd.Set(expression.Name(name), expression.Value(*v))
		if *v != *field {
			changes[name] = ledger.Change{Before: *field, After: *v}
			if name == "sealed_token" {
				changes[name] = ledger.Change{Before: ledger.Secret, After: ledger.Secret}
			}
		}
		*field = *v
	}
	set("name", ch.Name, &out.Name)
	set("base_url", ch.BaseURL, &out.BaseURL)
	set("gateway_prefix", ch.GatewayPrefix, &out.GatewayPrefix)
	setProvider(&upd, ch.Provider, &out, changes)
	set("sealed_token", ch.SealedToken, &out.SealedToken)
	set("account_name", ch.AccountName, &out.AccountName)
	if ch.OrgAllowlist != nil {
		if len(*ch.OrgAllowlist) == 0 {
			upd = upd.Remove(expression.Name("org_allowlist"))
		} else {
			upd = upd.Set(expression.Name("org_allowlist"), expression.Value(*ch.OrgAllowlist))
		}
		if !slices.Equal(in.OrgAllowlist, *ch.OrgAllowlist) {
			changes["org_allowlist"] = ledger.Change{Before: in.OrgAllowlist, After: *ch.OrgAllowlist}
		}
		out.OrgAllowlist = slices.Clone(*ch.OrgAllowlist)
		if len(out.OrgAllowlist) == 0 {
			out.OrgAllowlist = nil
		}
	}
	if ch.Verified {
		upd = upd.Set(expression.Name("expired"), expression.Value(false))
		if in.Expired {
			changes["expired"] = ledger.Change{Before: true, After: false}
		}
		out.Expired = false
	}
	upd = setWebhookSecret(upd, ch, &out, changes)
	upd = setInlineComments(upd, ch, &out, changes)
	if err := s.commitIntegration(ctx, in, upd, ch.SealedWebhookSecret != nil, changes); err != nil {
		return schema.Integration{}, err
	}
	return out, nil
}

// commitIntegration writes an integration's update, conditional on the
// revision it was computed from, with its audit entry and, when a webhook
// secret is set, the uuid's global look-up (ErrHookTaken when another
// company holds it), in one transaction.
func (s *Catalog) commitIntegration(ctx context.Context, in schema.Integration, upd expression.UpdateBuilder, hook bool, changes map[string]ledger.Change) error {
	cond := expression.Name("revision").Equal(expression.Value(in.Revision))
	item, err := s.t.TxUpdate(in.Key, upd, &cond)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{item}
	if hook {
		ref, err := s.txHookRef(in.CompanyID, in.UUID)
		if err != nil {
			return err
		}
		items = append(items, ref)
	}
	audit, err := s.l.TxAudit(ctx, in.CompanyID, ledger.AuditEntry{
		Action: "integration.update", TargetType: "integration", TargetID: in.UUID, Changes: changes,
	})
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, append(items, audit...))
	if hook && !ddb.ConditionFailedAt(err, 0) && ddb.ConditionFailedAt(err, 1) {
		return ErrHookTaken
	}
	return err
}

// MarkIntegrationExpired records that re-verification found the stored
// credentials dead: expired becomes true and ev (integration_expired) is
// recorded in the same transaction, only if the stored revision is still
// revision (ddb.ErrConflict otherwise).
func (s *Catalog) MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev schema.Event) error {
	upd := expression.Set(expression.Name("revision"), expression.Value(revision+1)).
		Set(expression.Name("updated_at"), expression.Value(s.t.Stamp())).
		Set(expression.Name("expired"), expression.Value(true))
	cond := expression.Name("revision").Equal(expression.Value(revision))
	mark, err := s.t.TxUpdate(schema.IntegrationKey(companyID, id), upd, &cond)
	if err != nil {
		return err
	}
	put, err := s.l.TxEvent(ev)
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, []types.TransactWriteItem{mark, put})
}

// setInlineComments adds a new setting of inline review comments to an
// integration's update, and its change to the audit entry.
func setInlineComments(upd expression.UpdateBuilder, ch IntegrationChange, out *schema.Integration, changes map[string]ledger.Change) expression.UpdateBuilder {
	if ch.InlineComments == nil {
		return upd
	}
	next := *ch.InlineComments
	if out.InlineComments == nil || *out.InlineComments != next {
		var before any
		if out.InlineComments != nil {
			before = *out.InlineComments
		}
		changes["inline_comments"] = ledger.Change{Before: before, After: next}
	}
	out.InlineComments = &next
	return upd.Set(expression.Name("inline_comments"), expression.Value(next))
}
