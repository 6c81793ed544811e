// Package awsclient loads the AWS SDK configuration that every client of
// the project (DynamoDB, DynamoDB Streams, S3, SES, KMS) is built from, with
// the one retry policy: a refusal worth another try is retried by the SDK's
// retryer, here, and nowhere else. (The store keeps loops of its own only
// for optimistic concurrency, re-reading what a failed condition says
// changed, which no retryer can do.)
package awsclient

import (
	"errors"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/awsclient/tracing"
)

// The retry budget of one SDK call. Waits are full-jitter exponential from
// BaseDelay, and from one second for throttling (the SDK's choice), each
// capped at MaxBackoff: at most about 2.6 s of waiting in all for a
// conflict or a 5xx, 7 s for throttling, well inside API Gateway's 29 s.
const (
	MaxAttempts = 8
	BaseDelay   = 25 * time.Millisecond
	MaxBackoff  = time.Second
)

// FromEnv is the configuration of the service's functions: the region and
// the execution role's credentials from the environment the Lambda runtime
// sets (AWS_REGION; AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN) and the retry policy. It links none of the SDK's
// credential chain (profiles, SSO, STS, the instance metadata service),
// which a function never uses and which would take about 0.7 MB of each
// bootstrap; tools that need it use package chain. In Lambda its clients
// are traced: each call is an X-Ray subsegment of the invocation.
func FromEnv() (aws.Config, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if region == "" || id == "" || secret == "" {
		return aws.Config{}, errors.New("awsclient: AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (the Lambda runtime sets them)")
	}
	cfg := Static(region, id, secret, os.Getenv("AWS_SESSION_TOKEN"))
	tracing.SDK(&cfg)
	return cfg, nil
}

// Static is the configuration with fixed credentials (the local stand-ins',
// or the environment's) and the retry policy.
func Static(region, id, secret, session string) aws.Config {
	return aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, session)),
		Retryer:     Retryer,
	}
}

// Retryer is the retry policy: the SDK's standard retryer with the budget
// above, its retryable errors (throttling codes, 5xx, connection errors and
// timeouts) and DynamoDB's transaction conflicts besides. The client-side
// retry quota is off: it fails a call with an error of its own, no longer
// DynamoDB's (so no 503 for the caller), and a Lambda environment serves
// one request at a time, so there is nothing for it to share fairly.
func Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = MaxAttempts
		o.BaseDelay = BaseDelay
		o.MaxBackoff = MaxBackoff
		o.RateLimiter = ratelimit.None
		o.Retryables = append(o.Retryables, retry.RetryableErrorCode{Codes: dynamoCodes}, cancelledTransaction)
	})
}

// policy answers Retryable without building a retryer per error.
var policy = Retryer()

// Retryable reports whether the policy retries err: once the budget is
// spent, such an error means "try again later", not a fault of the request.
func Retryable(err error) bool { return err != nil && policy.IsErrorRetryable(err) }

// dynamoCodes are DynamoDB's retryable error codes that the SDK's defaults
// lack: a single-item write that met a transaction in flight, and the two
// server errors by name (the SDK retries them by their HTTP status, which
// an error built without a response lacks).
var dynamoCodes = map[string]struct{}{
	"TransactionConflictException": {},
	"InternalServerError":          {},
	"ServiceUnavailable":           {},
}

// cancelledTransaction retries a transaction that DynamoDB cancelled for
// conflicts with other writes or throttling only. One cancelled for a
// failed condition (or an invalid item) is not retried: it would fail the
// same way until the caller re-reads. Every attempt carries the same
// ClientRequestToken, so a transaction that did commit is not applied twice.
var cancelledTransaction = retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return aws.UnknownTernary
	}
	retryable := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded":
			retryable = true
		case "", "None":
		default: // ConditionalCheckFailed, ValidationError, ItemCollectionSizeLimitExceeded
			return aws.FalseTernary
		}
	}
	return aws.BoolTernary(retryable)
})
