package schema

import (
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The keys and items of notification destinations' kinds and filters:
// what an endpoint's kind is, and the company's index of recent events the
// filter dry run reads.

// Kinds of webhook endpoint.
const (
	KindWebhook = "webhook" // signed Standard Webhooks (the default)
	KindSlack   = "slack"   // Slack incoming webhook, Block Kit message
	KindTeams   = "teams"   // Microsoft Teams Workflows webhook, Adaptive Card
)

// KindOrDefault is the endpoint's kind; endpoints stored before kinds
// existed are KindWebhook.
func (w WebhookEndpoint) KindOrDefault() string {
	if w.Kind == "" {
		return KindWebhook
	}
	return w.Kind
}

// Chat reports whether the endpoint is a chat destination (its URL is its
// secret, sealed; there is no signing secret).
func (w WebhookEndpoint) Chat() bool { return w.Kind == KindSlack || w.Kind == KindTeams }

// RecentEventTTL is how long a company's recent-event index keeps an
// event (the outbox's EventTTL: the dry run looks back as far).
const RecentEventTTL = EventTTL

// RecentEvent is one dispatched notification event in its company's
// recent-event index, newest first by CreatedAt: written by the delivery
// engine when it dispatches the event (idempotent: the key names the
// event), read by the filter dry run, expired after RecentEventTTL.
type RecentEvent struct {
	ddb.Key
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	Type      string `dynamodbav:"type"`
	CreatedAt string `dynamodbav:"created_at"`
	Data      string `dynamodbav:"data"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// RecentEventPK is a company's recent-event index partition.
func RecentEventPK(companyID int64) string { return CompanyPK(companyID) + "#RECENTEVENTS" }

// RecentEventKey sorts by creation time, then id.
func RecentEventKey(companyID int64, at time.Time, id string) ddb.Key {
	return ddb.Key{PK: RecentEventPK(companyID), SK: ddb.SortableTime(at) + "#" + id}
}
