package scmhost

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v72/github"

	"github.com/acme/codescan-api/shared/netguard"
	"github.com/acme/codescan-api/shared/outbound"
)

// Failure classifies a host call's error: rate limits wait for the host's
// reset or Retry-After, 5xx, 408, 429 and lost connections are retried,
// other answers (401, 403, 404, 422) are not (the delivery log shows the
// status). The host's own words are left out: a host could echo a token.
func Failure(doing string, err error) outbound.Outcome {
	var (
		abuse   *github.AbuseRateLimitError
		rate    *github.RateLimitError
		resp    *github.ErrorResponse
		blocked *netguard.BlockedAddressError
	)
	switch {
	case errors.As(err, &abuse):
		wait := time.Minute
		if abuse.RetryAfter != nil {
			wait = *abuse.RetryAfter
		}
		return outbound.Outcome{StatusCode: statusOf(abuse.Response), Retryable: true, RetryAfter: wait, Err: doing + ": the host's secondary rate limit"}
	case errors.As(err, &rate):
		return outbound.Outcome{StatusCode: statusOf(rate.Response), Retryable: true, RetryAfter: max(time.Until(rate.Rate.Reset.Time), time.Second),
			Err: doing + ": the token's rate limit is exhausted"}
	case errors.As(err, &resp) && resp.Response != nil:
		code := resp.Response.StatusCode
		retry := code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
		return outbound.Outcome{StatusCode: code, Retryable: retry, Err: fmt.Sprintf("%s: the host answered %d", doing, code)}
	case errors.As(err, &blocked):
		return outbound.Outcome{Err: doing + ": the host resolves to an internal address"}
	}
	return outbound.Outcome{Retryable: true, Err: doing + ": the host could not be reached"}
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}
