package policies

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Store is what the policies and blocking rules handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		CreateBlockingRule(ctx context.Context, r schema.BlockingRule) (schema.BlockingRule, error)
		CreatePolicy(ctx context.Context, p schema.Policy) (schema.Policy, error)
		DeactivatePolicy(ctx context.Context, companyID int64, policyID int64) (schema.Policy, error)
		DeleteBlockingRule(ctx context.Context, companyID int64, id int64) error
		GetBlockingRule(ctx context.Context, companyID int64, id int64) (schema.BlockingRule, error)
		GetPolicy(ctx context.Context, companyID int64, policyID int64) (schema.Policy, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		ListBlockingRules(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.BlockingRule], error)
		ListPolicies(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Policy], error)
		SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
		UpdateBlockingRule(ctx context.Context, oldSlug string, r schema.BlockingRule) (schema.BlockingRule, error)
	}
	Triage interface {
		ApplyTriageRuleAll(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (triage.RuleApplication, error)
		ApproveTriageRule(ctx context.Context, companyID int64, id string, userID int64) (triage.Rule, error)
		CreateTriageRule(ctx context.Context, r triage.Rule) (triage.Rule, error)
		DeleteTriageRule(ctx context.Context, companyID int64, id string) (triage.Rule, error)
		GetTriageRule(ctx context.Context, companyID int64, id string) (triage.Rule, error)
		ListTriageRules(ctx context.Context, companyID int64, q page.Request) (page.Page[triage.Rule], error)
		SetTriageRuleEnabled(ctx context.Context, companyID int64, id string, enabled bool) (triage.Rule, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Triage: st.Triage}
}
