package httpapi

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// IdempotencyStore keeps the answers of creations sent with
// Idempotency-Key (see idempotency.go). The composition passes the store.
type IdempotencyStore interface {
	ClaimIdempotencyKey(ctx context.Context, companyID int64, subject, key, fingerprint string, at time.Time) (*tenancy.IdempotencyClaim, *tenancy.IdempotencyRecord, error)
	CompleteIdempotencyKey(ctx context.Context, c *tenancy.IdempotencyClaim, a schema.IdempotentAnswer) error
	ReleaseIdempotencyKey(ctx context.Context, c *tenancy.IdempotencyClaim) error
}

// RateStore counts each credential's requests (see ratelimit.go).
type RateStore interface {
	TakeRequest(ctx context.Context, companyID int64, subject string, lim tenancy.RateLimit, at time.Time) (tenancy.RateState, error)
	RefundRequest(ctx context.Context, companyID int64, subject string, at time.Time) error
}
