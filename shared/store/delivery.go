package store

import "github.com/acme/codescan-api/shared/store/delivery"

// The delivery area's types, constants and errors, for callers of the
// facade (see delivery).
type (
	Delivery            = delivery.Delivery
	Attempt             = delivery.Attempt
	AttemptLog          = delivery.AttemptLog
	WebhookEndpoint     = delivery.WebhookEndpoint
	WebhookChange       = delivery.WebhookChange
	NotificationSetting = delivery.NotificationSetting
	ChannelChange       = delivery.ChannelChange
)

const (
	DeliverySending       = delivery.DeliverySending
	DeliveryRetrying      = delivery.DeliveryRetrying
	DeliveryDelivered     = delivery.DeliveryDelivered
	DeliveryFailed        = delivery.DeliveryFailed
	RetryDuePartition     = delivery.RetryDuePartition
	AttemptSucceeded      = delivery.AttemptSucceeded
	AttemptFailed         = delivery.AttemptFailed
	ChannelEmail          = delivery.ChannelEmail
	ChannelWebhook        = delivery.ChannelWebhook
	MaxWebhooksPerCompany = delivery.MaxWebhooksPerCompany
)

// ErrLimit refuses a create past a company's bound (see delivery).
var ErrLimit = delivery.ErrLimit

// DeliveryID is the id of event's delivery on channel to recipient.
func DeliveryID(eventID, channel, recipient string) string {
	return delivery.DeliveryID(eventID, channel, recipient)
}

// WebhookSecretRecord is what an endpoint's sealed secret is bound to (see
// delivery).
func WebhookSecretRecord(companyID int64, id string) string {
	return delivery.WebhookSecretRecord(companyID, id)
}

// NewWebhookID returns a random (version 4) uuid for a new endpoint.
func NewWebhookID() string { return delivery.NewWebhookID() }
