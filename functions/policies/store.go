package policies

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
)

// Store is what the policies and blocking rules handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	CreateBlockingRule(ctx context.Context, r store.BlockingRule) (store.BlockingRule, error)
	CreatePolicy(ctx context.Context, p store.Policy) (store.Policy, error)
	DeactivatePolicy(ctx context.Context, companyID, policyID int64) (store.Policy, error)
	DeleteBlockingRule(ctx context.Context, companyID, id int64) error
	GetBlockingRule(ctx context.Context, companyID, id int64) (store.BlockingRule, error)
	GetPolicy(ctx context.Context, companyID, policyID int64) (store.Policy, error)
	ListBlockingRules(ctx context.Context, companyID int64, q store.PageQuery) (store.BlockingRulePage, error)
	ListPolicies(ctx context.Context, companyID int64, q store.PageQuery) (store.PolicyPage, error)
	UpdateBlockingRule(ctx context.Context, oldSlug string, r store.BlockingRule) (store.BlockingRule, error)

	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	CreateTriageRule(ctx context.Context, r store.TriageRule) (store.TriageRule, error)
	GetTriageRule(ctx context.Context, companyID int64, id string) (store.TriageRule, error)
	ListTriageRules(ctx context.Context, companyID int64, q store.PageQuery) (store.TriageRulePage, error)
	SetTriageRuleEnabled(ctx context.Context, companyID int64, id string, enabled bool) (store.TriageRule, error)
	ApproveTriageRule(ctx context.Context, companyID int64, id string, userID int64) (store.TriageRule, error)
	DeleteTriageRule(ctx context.Context, companyID int64, id string) (store.TriageRule, error)
	ApplyTriageRuleAll(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (store.RuleApplication, error)
}
