package metrics

// The names of the service's metrics and dimension values, shared by the
// code that emits them and the dashboard (infra) that shows them.
const (
	// The edge (Service "api", dimension Group): answers by status.
	RateLimited = "RateLimited" // 429
	Unavailable = "Unavailable" // 503: contention, or a store that is down

	// Delivery (Service "delivery", dimensions Channel and Outcome).
	DeliveryAttempts = "DeliveryAttempts"
	DeliveryLatency  = "DeliveryLatency"

	// Scheduled jobs (Service "scheduler", dimension Job).
	JobDuration = "JobDuration"
	JobItems    = "JobItems"
	JobFailures = "JobFailures"
)

// Delivery channels and outcomes, the Channel and Outcome dimensions.
const (
	ChannelEmail   = "email"
	ChannelWebhook = "webhook"

	OutcomeDelivered      = "delivered"
	OutcomeRetryScheduled = "retry-scheduled"
	OutcomeFailed         = "failed"   // for good: not retryable, or past the retry horizon
	OutcomeDisabled       = "disabled" // the recipient is disabled or gone: dropped
)

// DeliveryOutcomes are the delivery outcomes, in the dashboard's order.
var DeliveryOutcomes = []string{OutcomeDelivered, OutcomeRetryScheduled, OutcomeFailed, OutcomeDisabled}
