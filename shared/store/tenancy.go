package store

import "github.com/acme/codescan-api/shared/store/tenancy"

// The tenancy area's types, constants and errors, for callers of the
// facade (see tenancy).
type (
	Company           = tenancy.Company
	NewCompany        = tenancy.NewCompany
	User              = tenancy.User
	UserChange        = tenancy.UserChange
	APIKey            = tenancy.APIKey
	Credential        = tenancy.Credential
	RateLimit         = tenancy.RateLimit
	RateState         = tenancy.RateState
	AuditRecord       = tenancy.AuditRecord
	AuditFilter       = tenancy.AuditFilter
	IdempotentAnswer  = tenancy.IdempotentAnswer
	IdempotencyRecord = tenancy.IdempotencyRecord
	IdempotencyClaim  = tenancy.IdempotencyClaim
)

var (
	ErrEmailTaken   = tenancy.ErrEmailTaken
	ErrSubjectTaken = tenancy.ErrSubjectTaken
	ErrLastAdmin    = tenancy.ErrLastAdmin
)

const (
	FacetAll             = tenancy.FacetAll
	FacetAdmin           = tenancy.FacetAdmin
	FacetMember          = tenancy.FacetMember
	KeyPrefixLength      = tenancy.KeyPrefixLength
	LastUseResolution    = tenancy.LastUseResolution
	IdempotencyRetention = tenancy.IdempotencyRetention
)

// HashAPIKey is the only form in which an API key is stored.
func HashAPIKey(key string) string { return tenancy.HashAPIKey(key) }

// FacetPermission is the facet of users holding perm.
func FacetPermission(perm string) string { return tenancy.FacetPermission(perm) }

// RateSubject names the credential a budget belongs to (see tenancy).
func RateSubject(keyID, userID int64) string { return tenancy.RateSubject(keyID, userID) }
