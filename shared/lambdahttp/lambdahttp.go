// Package lambdahttp is the one place that knows the API Gateway adapter: a
// REST API (payload 1.0) event becomes an *http.Request for a group's
// http.Handler.
package lambdahttp

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/acme/codescan-api/shared/httpapi"
)

// Handler is the function lambda.Start receives for h. Tests invoke it with
// the bytes of events/*.json.
func Handler(h http.Handler) func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	adapter := httpadapter.New(withGatewayRequestID(h))
	var invoked atomic.Bool
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		ctx = httpapi.WithInvocation(ctx, httpapi.Invocation{ColdStart: !invoked.Swap(true), TraceID: traceID(ctx)})
		// ProxyWithContext keeps the gateway context in the request context;
		// plain Proxy would copy it, claims included, into request headers.
		return adapter.ProxyWithContext(ctx, ev)
	}
}

// traceHeader is the context key under which the Lambda runtime client
// (aws-lambda-go) puts the invocation's X-Ray trace header; it also sets
// _X_AMZN_TRACE_ID, which is process-wide and so read only as a fallback.
const traceHeader = "x-amzn-trace-id"

// traceID is the Root of the invocation's trace header
// ("Root=1-…;Parent=…;Sampled=…"), the id X-Ray's console searches by;
// "" when the invocation is not traced.
func traceID(ctx context.Context) string {
	h, _ := ctx.Value(traceHeader).(string)
	if h == "" {
		h = os.Getenv("_X_AMZN_TRACE_ID")
	}
	for part := range strings.SplitSeq(h, ";") {
		if root, ok := strings.CutPrefix(strings.TrimSpace(part), "Root="); ok {
			return root
		}
	}
	return ""
}

// Start serves h as this Lambda function. It never returns.
func Start(h http.Handler) { lambda.Start(Handler(h)) }

// withGatewayRequestID uses API Gateway's request id as ours, so log lines
// and gateway access logs correlate.
func withGatewayRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gw, ok := core.GetAPIGatewayContextFromContext(r.Context()); ok && gw.RequestID != "" {
			r.Header.Set(httpapi.RequestIDHeader, gw.RequestID)
		}
		h.ServeHTTP(w, r)
	})
}
