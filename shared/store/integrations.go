package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Integration is a connection to a source-code host. The item is keyed by
// uuid (the id clients use in paths), and listed in id order through GSI1.
// The token is stored only sealed (see package secrets).
type Integration struct {
	Key
	OffsetKeys
	GSI1PK        string   `dynamodbav:"GSI1PK"`
	GSI1SK        string   `dynamodbav:"GSI1SK"`
	ID            int64    `dynamodbav:"id"`
	UUID          string   `dynamodbav:"uuid"`
	CompanyID     int64    `dynamodbav:"company_id"`
	Name          string   `dynamodbav:"name"`
	AccountID     string   `dynamodbav:"account_id"`
	AccountName   string   `dynamodbav:"account_name"`
	OrgAllowlist  []string `dynamodbav:"org_allowlist,omitempty"`
	BaseURL       string   `dynamodbav:"base_url"`
	GatewayPrefix string   `dynamodbav:"gateway_prefix"`
	Expired       bool     `dynamodbav:"expired"`
	SealedToken   string   `dynamodbav:"sealed_token"`
	// Revision grows by one on every update; updates are conditional on the
	// revision they read, so two concurrent updates cannot interleave.
	Revision  int64  `dynamodbav:"revision"`
	CreatedAt string `dynamodbav:"created_at"`
	UpdatedAt string `dynamodbav:"updated_at"`
}

func integrationKey(companyID int64, id string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "SCM#" + id}
}

func integrationListPK(companyID int64) string { return schema.CompanyPK(companyID) + "#SCM" }

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
func (s *Store) CreateIntegration(ctx context.Context, in Integration) (Integration, error) {
	// Only the canonical form: reads look the uuid up canonicalised, and the
	// sealed token is bound to the uuid exactly as given.
	if id, ok := CanonicalUUID(in.UUID); !ok || id != in.UUID {
		return Integration{}, fmt.Errorf("integration uuid %q is not a canonical uuid", in.UUID)
	}
	id, err := s.NextID(ctx, "integration")
	if err != nil {
		return Integration{}, err
	}
	in.ID = id
	in.prepare()
	in.CreatedAt = s.t.Stamp()
	in.UpdatedAt = in.CreatedAt
	item, err := s.t.TxPutNew(in)
	if err != nil {
		return Integration{}, err
	}
	counter, err := s.l.TxCount(in.CompanyID, schema.CountIntegrations, 1)
	if err != nil {
		return Integration{}, err
	}
	return in, s.t.Transact(ctx, []types.TransactWriteItem{item, counter})
}

// prepare sets the keys and first revision of a new integration with its
// company and id set.
func (in *Integration) prepare() {
	in.Key = integrationKey(in.CompanyID, in.UUID)
	in.GSI1PK = integrationListPK(in.CompanyID)
	in.GSI1SK = fmt.Sprintf("%012d", in.ID)
	in.OffsetKeys = OffsetKeys{OffsetPK: integrationList(in.CompanyID).OffsetPartition, OffsetSK: in.GSI1SK}
	in.Revision = 1
}

// GetIntegration reads an integration of a company by uuid.
func (s *Store) GetIntegration(ctx context.Context, companyID int64, id string) (Integration, error) {
	var in Integration
	err := s.t.GetItem(ctx, integrationKey(companyID, id), &in)
	return in, err
}

func integrationList(companyID int64) page.List {
	return page.List{Index: tabledef.GSI1, Partition: integrationListPK(companyID), Forward: true,
		OffsetPartition: integrationListPK(companyID)}
}

// IntegrationsPage reads one page of a company's integrations, by id.
func (s *Store) IntegrationsPage(ctx context.Context, companyID int64, q PageQuery) ([]Integration, PageResult, error) {
	out := []Integration{}
	res, err := s.readPage(ctx, integrationList(companyID), q, &out)
	return out, res, err
}

// IntegrationCount is the number of a company's integrations (a counter
// kept on write).
func (s *Store) IntegrationCount(ctx context.Context, companyID int64) (int, error) {
	return s.l.CompanyCount(ctx, companyID, schema.CountIntegrations)
}

// ListIntegrations returns every integration of a company, by id (the naive
// baseline of the bench; handlers read pages).
func (s *Store) ListIntegrations(ctx context.Context, companyID int64) ([]Integration, error) {
	var out []Integration
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(integrationListPK(companyID)))
	err := s.t.QueryAll(ctx, tabledef.GSI1.Name, kc, true, &out)
	return out, err
}

// IntegrationChange lists the attributes an update sets; nil keeps a value.
type IntegrationChange struct {
	Name          *string
	OrgAllowlist  *[]string
	BaseURL       *string
	GatewayPrefix *string
	SealedToken   *string
	AccountName   *string
	// Verified records a successful credential check: expired becomes false.
	Verified bool
}

// UpdateIntegration applies ch in one write, in a transaction with its audit
// entry, only if the stored revision is still revision (ErrConflict
// otherwise; ErrNotFound if the item is gone), and returns the new record.
func (s *Store) UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch IntegrationChange) (Integration, error) {
	var in Integration
	if err := s.t.GetItemConsistent(ctx, integrationKey(companyID, id), &in); err != nil {
		return Integration{}, err
	}
	if in.Revision != revision {
		return Integration{}, ErrConflict
	}
	out := in
	out.Revision, out.UpdatedAt = revision+1, s.t.Stamp()
	upd := expression.Set(expression.Name("revision"), expression.Value(out.Revision)).
		Set(expression.Name("updated_at"), expression.Value(out.UpdatedAt))
	changes := map[string]Change{}
	set := func(name string, v *string, field *string) {
		if v == nil {
			return
		}
		upd = upd.Set(expression.Name(name), expression.Value(*v))
		if *v != *field {
			changes[name] = Change{Before: *field, After: *v}
			if name == "sealed_token" {
				changes[name] = Change{Before: Secret, After: Secret}
			}
		}
		*field = *v
	}
	set("name", ch.Name, &out.Name)
	set("base_url", ch.BaseURL, &out.BaseURL)
	set("gateway_prefix", ch.GatewayPrefix, &out.GatewayPrefix)
	set("sealed_token", ch.SealedToken, &out.SealedToken)
	set("account_name", ch.AccountName, &out.AccountName)
	if ch.OrgAllowlist != nil {
		if len(*ch.OrgAllowlist) == 0 {
			upd = upd.Remove(expression.Name("org_allowlist"))
		} else {
			upd = upd.Set(expression.Name("org_allowlist"), expression.Value(*ch.OrgAllowlist))
		}
		if !slices.Equal(in.OrgAllowlist, *ch.OrgAllowlist) {
			changes["org_allowlist"] = Change{Before: in.OrgAllowlist, After: *ch.OrgAllowlist}
		}
		out.OrgAllowlist = slices.Clone(*ch.OrgAllowlist)
		if len(out.OrgAllowlist) == 0 {
			out.OrgAllowlist = nil
		}
	}
	if ch.Verified {
		upd = upd.Set(expression.Name("expired"), expression.Value(false))
		if in.Expired {
			changes["expired"] = Change{Before: true, After: false}
		}
		out.Expired = false
	}
	cond := expression.Name("revision").Equal(expression.Value(revision))
	item, err := s.t.TxUpdate(in.Key, upd, &cond)
	if err != nil {
		return Integration{}, err
	}
	audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{
		Action: "integration.update", TargetType: "integration", TargetID: id, Changes: changes,
	})
	if err != nil {
		return Integration{}, err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...)); err != nil {
		return Integration{}, err
	}
	return out, nil
}

// MarkIntegrationExpired records that re-verification found the stored
// credentials dead: expired becomes true and ev (integration_expired) is
// recorded in the same transaction, only if the stored revision is still
// revision (ErrConflict otherwise).
func (s *Store) MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev Event) error {
	upd := expression.Set(expression.Name("revision"), expression.Value(revision+1)).
		Set(expression.Name("updated_at"), expression.Value(s.t.Stamp())).
		Set(expression.Name("expired"), expression.Value(true))
	cond := expression.Name("revision").Equal(expression.Value(revision))
	mark, err := s.t.TxUpdate(integrationKey(companyID, id), upd, &cond)
	if err != nil {
		return err
	}
	put, err := s.l.TxEvent(ev)
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, []types.TransactWriteItem{mark, put})
}
