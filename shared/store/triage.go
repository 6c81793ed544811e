package store

import (
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/store/triageops"
	"github.com/acme/codescan-api/shared/store/triagerules"
)

// The triage area's types, constants and errors, and those of the areas
// it applies (triage rules, bulk operations), for callers of the facade.
type (
	IssueUpdate     = triage.IssueUpdate
	RiskTerms       = triage.RiskTerms
	ErrTooMany      = triage.ErrTooMany
	ErrRuleTooMany  = triage.ErrRuleTooMany
	RuleApplication = triage.RuleApplication
	// TriageRule is a stored triage rule (see triagerules).
	TriageRule = triagerules.Rule
	// TriageRulePage is a page of triage rules.
	TriageRulePage = triagerules.Page
	// TriageOp is a bulk triage operation (see the triageops area).
	TriageOp = triageops.Op
)

// The scopes of a decision.
const (
	DecisionProject = triage.DecisionProject
	DecisionBranch  = triage.DecisionBranch
)

const (
	// AcceptanceExpired is the history reason, and the issue's, of an
	// acceptance that ended.
	AcceptanceExpired = triage.AcceptanceExpired
	// MaxTriage is the most issues one bulk triage may match.
	MaxTriage = triage.MaxTriage
	// MaxRuleApply is the most issues one application of a rule changes
	// at once (past it, it runs as an operation).
	MaxRuleApply = triage.MaxRuleApply
	// TriageEntity marks operation items; the ingester's stream filter
	// selects new items carrying it.
	TriageEntity = triageops.Entity
)

// The states of a bulk triage operation.
const (
	TriageQueued     = triageops.Queued
	TriageCollecting = triageops.Collecting
	TriageApplying   = triageops.Applying
	TriageDone       = triageops.Done
	TriageFailed     = triageops.Failed
)

var (
	// DecisionScopes are the scopes a triage may take.
	DecisionScopes = triage.DecisionScopes
	// Errors of the triage rule calls.
	ErrOwnApproval  = triagerules.ErrOwnApproval
	ErrNoApproval   = triagerules.ErrNoApproval
	ErrRuleInactive = triage.ErrRuleInactive
	ErrRuleGone     = triage.ErrRuleGone
	ErrRuleEnded    = triage.ErrRuleEnded
)
