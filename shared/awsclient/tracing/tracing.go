// Package tracing records every AWS SDK call of a Lambda function as an
// X-Ray subsegment of its invocation (DynamoDB, S3, SES, KMS): the
// subsegment names the service and carries the operation, region, request
// id and outcome. Documents go over UDP to the daemon the Lambda runtime
// runs (AWS_XRAY_DAEMON_ADDRESS), as the X-Ray SDKs send them. It is written
// here, not taken from the X-Ray SDK for Go, because that SDK links the v1
// AWS SDK and gRPC, which would double every bootstrap (about 22-27 MB).
package tracing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// traceKey is the context key under which aws-lambda-go puts the
// invocation's trace header (it also sets _X_AMZN_TRACE_ID).
const traceKey = "x-amzn-trace-id"

// InLambda reports whether the process runs as a Lambda function, the only
// place an X-Ray daemon listens: elsewhere (make run, tests) nothing is
// traced and nothing is sent.
func InLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }

// SDK adds the tracing middleware to cfg's clients when in Lambda.
func SDK(cfg *aws.Config) {
	if !InLambda() {
		return
	}
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		// After the service metadata is set, around the retries: one
		// subsegment per call, whatever the number of attempts.
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("XRaySubsegment", record), middleware.After)
	})
}

func record(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	root, parent, ok := header(ctx)
	if !ok {
		return next.HandleInitialize(ctx, in)
	}
	start := time.Now()
	out, md, err := next.HandleInitialize(ctx, in)
	sub := subsegment{
		Name: awsmiddleware.GetServiceID(ctx), ID: newID(), TraceID: root, ParentID: parent,
		Type: "subsegment", Namespace: "aws", Start: epoch(start), End: epoch(time.Now()),
		AWS: map[string]any{"operation": awsmiddleware.GetOperationName(ctx), "region": awsmiddleware.GetRegion(ctx)},
	}
	if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
		sub.AWS["request_id"] = id
	}
	status := 0
	if r, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		status = r.StatusCode
		sub.HTTP = map[string]any{"response": map[string]int{"status": status}}
	}
	switch {
	case err == nil:
	case status == 429:
		sub.Error, sub.Throttle = true, true
	case status >= 400 && status < 500:
		sub.Error = true
	default: // a 5xx, or no answer at all
		sub.Fault = true
	}
	send(sub)
	return out, md, err
}

// subsegment is an independent X-Ray subsegment document.
type subsegment struct {
	Name      string         `json:"name"`
	ID        string         `json:"id"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	Type      string         `json:"type"`
	Namespace string         `json:"namespace"`
	Start     float64        `json:"start_time"`
	End       float64        `json:"end_time"`
	AWS       map[string]any `json:"aws"`
	HTTP      map[string]any `json:"http,omitempty"`
	Error     bool           `json:"error,omitempty"`
	Throttle  bool           `json:"throttle,omitempty"`
	Fault     bool           `json:"fault,omitempty"`
}

// header returns the trace and parent segment ids of the invocation, and
// false when there is none or it is not sampled (a cold start's set-up,
// or a request X-Ray chose not to record).
func header(ctx context.Context) (root, parent string, ok bool) {
	h, _ := ctx.Value(traceKey).(string)
	if h == "" {
		h = os.Getenv("_X_AMZN_TRACE_ID")
	}
	sampled := false
	for _, part := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			root = v
		case "Parent":
			parent = v
		case "Sampled":
			sampled = v == "1"
		}
	}
	return root, parent, sampled && root != "" && parent != ""
}

// daemon is the daemon's UDP address: AWS_XRAY_DAEMON_ADDRESS is either
// "host:port" or "tcp:host:port udp:host:port".
func daemon() string {
	addr := os.Getenv("AWS_XRAY_DAEMON_ADDRESS")
	for _, f := range strings.Fields(addr) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			return a
		}
	}
	if addr == "" || strings.Contains(addr, "tcp:") {
		return "127.0.0.1:2000"
	}
	return addr
}

// send emits the document; tracing is best effort, so a failure is dropped
// and never fails the call it describes.
func send(sub subsegment) {
	doc, err := json.Marshal(sub)
	if err != nil {
		return
	}
	conn, err := net.Dial("udp", daemon())
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = conn.Write(append([]byte("{\"format\":\"json\",\"version\":1}\n"), doc...))
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
