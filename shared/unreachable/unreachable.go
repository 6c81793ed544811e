// Package unreachable marks an AWS SDK call that could not reach its
// service as store.ErrUnavailable, which the API answers with 503 and
// Retry-After (and workers retry): the connection was refused, reset or
// closed before an answer came, after the SDK's own retries. Locally that is a
// stand-in (DynamoDB Local, the S3 server) that died and is being started
// again; in AWS, a network failure. Without it such a call is a 500.
package unreachable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Mark is an API option for an SDK client (Options.APIOptions): its calls
// that failed as Failed says wrap store.ErrUnavailable.
func Mark(stack *middleware.Stack) error {
	// First of the initialize step, so it sees the error after every retry.
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("MarkUnreachable",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil && ctx.Err() == nil && Failed(err) {
				err = fmt.Errorf("%w: %w", ddb.ErrUnavailable, err)
			}
			return out, md, err
		}), middleware.Before)
}

// Failed reports whether err is a call that never got an answer from its
// service: the connection refused, reset or closed. (The retry policy has
// no client-side quota, so none is ever spent.)
func Failed(err error) bool {
	var send *smithyhttp.RequestSendError
	if !errors.As(err, &send) {
		return false
	}
	for _, cause := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, cause) {
			return true
		}
	}
	return false
}
