package store

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/catalog"
)

// The catalog area's types, for callers of the facade (see catalog).
type (
	Project           = catalog.Project
	ProjectPage       = catalog.ProjectPage
	Team              = catalog.Team
	Policy            = catalog.Policy
	PolicyPage        = catalog.PolicyPage
	BlockingRule      = catalog.BlockingRule
	BlockingRulePage  = catalog.BlockingRulePage
	RuleConditions    = catalog.RuleConditions
	Integration       = catalog.Integration
	IntegrationChange = catalog.IntegrationChange
)

// IntegrationTokenRecord is what an integration's sealed token is bound to
// (see catalog).
func IntegrationTokenRecord(companyID int64, id string) string {
	return catalog.IntegrationTokenRecord(companyID, id)
}

// NewIntegrationUUID returns a random (version 4) uuid (see catalog).
func NewIntegrationUUID() string { return catalog.NewIntegrationUUID() }

// slaSettings reads a company's SLA settings with get, for the issue write
// path (see catalog.ReadSLASettings).
func (s *Store) slaSettings(ctx context.Context, companyID int64, get func(context.Context, Key, any) error) (sla.Settings, bool, error) {
	return catalog.ReadSLASettings(ctx, companyID, get)
}
