package schema

import (
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The keys and items of delivery: deliveries and their attempt log,
// webhook endpoints, notification settings.

// Delivery is one event for one recipient (a webhook endpoint or a user's
// email address): its id derives from both, so the conditional write that
// claims it is the idempotency check of at-least-once dispatch.
//
// While a delivery is being sent or waits for a retry it is in the retry
// index (GSI2, partition RetryDuePartition) under the time it is due: a
// retry's time, or a claim's lease expiry, so a delivery whose sender died
// between claiming and finishing is picked up again by the timer.
type Delivery struct {
	ddb.Key
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	EventID   string `dynamodbav:"event_id"`
	EventType string `dynamodbav:"event_type"`
	Channel   string `dynamodbav:"channel"`   // ChannelEmail or ChannelWebhook
	Recipient string `dynamodbav:"recipient"` // endpoint id or user id
	// Payload is the Standard Webhooks body {type, id, created_at,
	// company_id, data}; emails are rendered from it too.
	Payload        string `dynamodbav:"payload"`
	State          string `dynamodbav:"state"`
	Attempts       int    `dynamodbav:"attempts"`
	ClaimedUntil   string `dynamodbav:"claimed_until,omitempty"`
	FirstAttemptAt string `dynamodbav:"first_attempt_at,omitempty"`
	LastAttemptAt  string `dynamodbav:"last_attempt_at,omitempty"`
	NextAttemptAt  string `dynamodbav:"next_attempt_at,omitempty"`
	LastStatus     int    `dynamodbav:"last_status,omitempty"`
	LastError      string `dynamodbav:"last_error,omitempty"`
	CreatedAt      string `dynamodbav:"created_at"`
	ExpiresAt      int64  `dynamodbav:"expires_at"`
}

func DeliveryKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "DELIVERY#" + id}
}

// AttemptLog is one webhook delivery attempt as its endpoint's log shows it.
type AttemptLog struct {
	ddb.Key
	GSI1PK      string `dynamodbav:"GSI1PK"`
	GSI1SK      string `dynamodbav:"GSI1SK"`
	DeliveryID  string `dynamodbav:"delivery_id"`
	EventID     string `dynamodbav:"event_id"`
	EventType   string `dynamodbav:"event_type"`
	Attempt     int    `dynamodbav:"attempt"`
	At          string `dynamodbav:"at"`
	Outcome     string `dynamodbav:"outcome"` // AttemptSucceeded or AttemptFailed
	StatusCode  int    `dynamodbav:"status_code,omitempty"`
	LatencyMS   int64  `dynamodbav:"latency_ms"`
	Error       string `dynamodbav:"error,omitempty"`
	NextRetryAt string `dynamodbav:"next_retry_at,omitempty"`
	ExpiresAt   int64  `dynamodbav:"expires_at"`
}

func AttemptLogPK(companyID int64, endpointID string) string {
	return fmt.Sprintf("%s#WHLOG#%s", CompanyPK(companyID), endpointID)
}

// WebhookEndpoint is a company's webhook receiver. Its signing secret is
// stored only sealed (package secrets), bound to WebhookSecretRecord; after
// a rotation the previous secret keeps signing until PrevSecretUntil so
// receivers can switch without losing a delivery.
type WebhookEndpoint struct {
	ddb.Key
	GSI1PK           string   `dynamodbav:"GSI1PK"`
	GSI1SK           string   `dynamodbav:"GSI1SK"`
	ID               string   `dynamodbav:"id"`
	CompanyID        int64    `dynamodbav:"company_id"`
	URL              string   `dynamodbav:"url"`
	Types            []string `dynamodbav:"types"`
	Description      string   `dynamodbav:"description"`
	Active           bool     `dynamodbav:"active"`
	SealedSecret     string   `dynamodbav:"sealed_secret"`
	PrevSealedSecret string   `dynamodbav:"prev_sealed_secret,omitempty"`
	PrevSecretUntil  string   `dynamodbav:"prev_secret_until,omitempty"`
	// FailingSince is the first failed attempt after the last success;
	// an endpoint failing for WebhookDisableAfter is disabled.
	FailingSince   string `dynamodbav:"failing_since,omitempty"`
	DisabledReason string `dynamodbav:"disabled_reason,omitempty"`
	CreatedAt      string `dynamodbav:"created_at"`
	UpdatedAt      string `dynamodbav:"updated_at"`
	// ReceivesFrom is when the endpoint last began to receive events: its
	// creation, or the change that enabled it again or subscribed it to
	// more types. Events recorded before then are not its (as Stripe and
	// GitHub do: a new receiver gets no backlog). Empty: CreatedAt.
	ReceivesFrom string `dynamodbav:"receives_from,omitempty"`
	// Kind is the receiver's wire format: "" or "webhook" (signed
	// Standard Webhooks), "slack" or "teams" (chat messages; the URL is
	// the secret: SealedSecret holds it sealed, URL only its masked form).
	Kind string `dynamodbav:"kind,omitempty"`
	// Filter is the endpoint's CEL filter expression ("" receives every
	// event of its types; see shared/eventfilter).
	Filter string `dynamodbav:"filter,omitempty"`
}

// Receives reports whether an event recorded at t is the endpoint's: it
// was recorded when the endpoint was receiving events.
func (w WebhookEndpoint) Receives(t time.Time) bool {
	from := w.ReceivesFrom
	if from == "" {
		from = w.CreatedAt
	}
	since, err := time.Parse(time.RFC3339Nano, from)
	return err != nil || !t.Before(since)
}

func WebhookKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "WEBHOOK#" + id}
}

func WebhookListPK(companyID int64) string { return CompanyPK(companyID) + "#WEBHOOKS" }

func WebhookCounterKey(companyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "COUNT#WEBHOOKS"}
}

// NotificationSetting is a company default (UserID 0) or a user preference
// for one notification type. A nil channel inherits the layer below.
type NotificationSetting struct {
	ddb.Key
	TypeCode       string `dynamodbav:"type_code"`
	UserID         int64  `dynamodbav:"user_id,omitempty"`
	EmailEnabled   *bool  `dynamodbav:"email_enabled,omitempty"`
	WebhookEnabled *bool  `dynamodbav:"webhook_enabled,omitempty"`
	// Filter is a user's CEL filter of the type's emails ("" sends all;
	// see shared/eventfilter); company defaults have none.
	Filter    string `dynamodbav:"filter,omitempty"`
	UpdatedAt string `dynamodbav:"updated_at"`
}

// Notification settings' sort keys: every one under NotifPrefix, the
// company's defaults under NotifCompanyPrefix, a user's preferences under
// NotifUserPrefix and the user's id.
const (
	NotifPrefix        = "NOTIF#"
	NotifCompanyPrefix = NotifPrefix + "COMPANY#"
	NotifUserPrefix    = NotifPrefix + "USER#"
)

func NotificationKey(companyID, userID int64, typeCode string) ddb.Key {
	if userID == 0 {
		return ddb.Key{PK: CompanyPK(companyID), SK: NotifCompanyPrefix + typeCode}
	}
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%d#%s", NotifUserPrefix, userID, typeCode)}
}
