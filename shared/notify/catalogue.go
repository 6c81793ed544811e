// Package notify holds what every party to a notification shares: the
// catalogue of notification types and how a setting is inherited (read by
// the notification settings routes and the dispatcher), and the payload
// a webhook carries (sent by the dispatcher and the webhooks routes).
package notify

import (
	"github.com/acme/codescan-api/shared/store/schema"
)

// Type is a notification type with its platform defaults, the bottom layer
// of inheritance (platform -> company default -> user preference).
type Type struct {
	Code           string
	Description    string
	EmailEnabled   bool
	WebhookEnabled bool
}

// Types is the platform's catalogue of notification types. The spec leaves
// the list unshown; these are the events the platform emits.
var Types = []Type{
	{"new_critical_issue", "A new critical-urgency issue was found", true, true},
	{"new_high_issue", "A new high-urgency issue was found", true, false},
	{"scan_completed", "A scan finished", false, true},
	{"scan_failed", "A scan failed", true, true},
	{"sla_breach", "An issue passed its SLA deadline", true, false},
	{"weekly_digest", "Weekly summary of findings", true, false},
	{"integration_expired", "A source-code-host integration's credentials expired", true, false},
	{"policy_violation", "A change violated an active policy", true, true},
	{"issue_status_changed", "An issue's status changed (triaged, fixed, reopened)", false, true},
	{"risk_acceptance_expired", "A risk acceptance ended and its issue reopened", true, false},
	{"component_affected", "An advisory reached a package version the company's projects hold", true, true},
}

// TypeWebhookDisabled is the operational event of an endpoint disabled
// after failing for too long: emailed to the company's active admins,
// whatever their notification settings, never sent by webhook. It is not
// in the catalogue (nobody can turn it off).
const TypeWebhookDisabled = "webhook_disabled"

// TypeScanCompleted is the event of a scan whose findings are all stored;
// besides its notifications it asks for the scan's pull request to be
// decorated (shared/prdecor).
const TypeScanCompleted = "scan_completed"

// Lookup returns the type with code.
func Lookup(code string) (Type, bool) {
	for _, t := range Types {
		if t.Code == code {
			return t, true
		}
	}
	return Type{}, false
}

// Codes returns every type code.
func Codes() []string {
	out := make([]string, len(Types))
	for i, t := range Types {
		out[i] = t.Code
	}
	return out
}

// The layers an effective value comes from.
const (
	SourcePlatform = "platform"
	SourceCompany  = "company"
	SourceUser     = "user"
)

// Resolve applies inheritance: the user's value, else the company's, else
// the platform's; it returns the value and the layer it comes from.
func Resolve(platform bool, company, user *bool) (bool, string) {
	switch {
	case user != nil:
		return *user, SourceUser
	case company != nil:
		return *company, SourceCompany
	}
	return platform, SourcePlatform
}

// Effective returns the effective channels of type t for a user with
// preference user under the company default company (a zero setting
// inherits). The company's own webhook channel is Effective with a zero
// user: webhooks belong to the company, not to a user.
func Effective(t Type, company, user schema.NotificationSetting) (email, webhook bool) {
	email, _ = Resolve(t.EmailEnabled, company.EmailEnabled, user.EmailEnabled)
	webhook, _ = Resolve(t.WebhookEnabled, company.WebhookEnabled, user.WebhookEnabled)
	return email, webhook
}
