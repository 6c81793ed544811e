package bulktriage

import (
	"encoding/json"

	"github.com/acme/codescan-api/shared/store/schema"
)

// View is an operation as the API shows it, wherever it was asked for
// (POST /issues/triage, POST /triage-rules/{id}/apply) and when polled
// (GET /issues/triage/{operation_id}).
type View struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	// ExpiresAt and Owner are the accepted risk's terms a bulk triage
	// gives, when the request named them.
	ExpiresAt string `json:"expires_at,omitempty"`
	Owner     int64  `json:"owner,omitempty"`
	// RuleID names the rule a rule's application applies.
	RuleID     string            `json:"rule_id,omitempty"`
	Filters    map[string]string `json:"filters"`
	Matched    int64             `json:"matched"`
	Processed  int64             `json:"processed"`
	Changed    int64             `json:"changed"`
	Error      string            `json:"error,omitempty"`
	CreatedAt  string            `json:"created_at"`
	FinishedAt *string           `json:"finished_at"`
}

// Show is op's View.
func Show(op schema.TriageOpItem) View {
	out := View{ID: op.ID, State: op.State, Status: op.Status, Reason: op.Reason, ExpiresAt: op.RiskExpiresAt, Owner: op.RiskOwner,
		RuleID: op.RuleID, Filters: map[string]string{}, Matched: op.Matched, Processed: op.Processed, Changed: op.Changed,
		Error: op.Error, CreatedAt: op.CreatedAt}
	if op.Filters != "" {
		_ = json.Unmarshal([]byte(op.Filters), &out.Filters) // written by the request as a JSON object
	}
	if op.FinishedAt != "" {
		out.FinishedAt = &op.FinishedAt
	}
	return out
}
