package notifications

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
}

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
