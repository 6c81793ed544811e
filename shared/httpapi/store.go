package httpapi

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
)

// IdempotencyStore keeps the answers of creations sent with
// Idempotency-Key (see idempotency.go). The composition passes the store.
type IdempotencyStore interface {
	ClaimIdempotencyKey(ctx context.Context, companyID int64, subject, key, fingerprint string, at time.Time) (*store.IdempotencyClaim, *store.IdempotencyRecord, error)
	CompleteIdempotencyKey(ctx context.Context, c *store.IdempotencyClaim, a store.IdempotentAnswer) error
	ReleaseIdempotencyKey(ctx context.Context, c *store.IdempotencyClaim) error
}

// RateStore counts each credential's requests (see ratelimit.go).
type RateStore interface {
	TakeRequest(ctx context.Context, companyID int64, subject string, lim store.RateLimit, at time.Time) (store.RateState, error)
	RefundRequest(ctx context.Context, companyID int64, subject string, at time.Time) error
}
