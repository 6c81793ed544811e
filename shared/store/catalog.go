package store

import (
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
