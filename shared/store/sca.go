package store

import "github.com/acme/codescan-api/shared/store/sca"

// The SCA findings area's types, for callers of the facade (see sca).
type (
	SCAIssue        = sca.Issue
	SCAPackage      = sca.Package
	SCALocation     = sca.Location
	SCAReachability = sca.Reachability
	SCAUsage        = sca.Usage
)

// SCAUrgency is the urgency code of an SCA finding's severity (see
// sca.Urgency).
func SCAUrgency(severity string) string { return sca.Urgency(severity) }
