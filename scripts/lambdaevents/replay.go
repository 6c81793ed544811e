package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/s3local"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/schema"
)

// world is the demo data on a DynamoDB Local table and the dependencies a
// Lambda main builds from its environment (config.Load reads TABLE_NAME and
// DYNAMODB_ENDPOINT), with every DynamoDB call recorded.
type world struct {
	deps    config.Deps
	company *demo.Company
	calls   *recorder
}

func newWorld(ctx context.Context) (*world, error) {
	deps, err := config.Load(ctx)
	if err != nil {
		return nil, err
	}
	// The uploads group's Lambda main adds the report bucket from
	// REPORTS_BUCKET and S3_ENDPOINT (withddb sets them; make run's local
	// S3 server otherwise).
	bucket, endpoint := os.Getenv(reportstore.EnvBucket), os.Getenv(reportstore.EnvEndpoint)
	if bucket == "" {
		bucket, endpoint = s3local.Bucket, "http://127.0.0.1:4568"
	}
	reports, err := s3reports.New(ctx, bucket, endpoint)
	if err != nil {
		return nil, err
	}
	deps.Reports, deps.Exports = reports, reports
	if err := bulkload.CreateTable(ctx, deps.Store, true); err != nil {
		return nil, err
	}
	doc, err := demo.Seed(ctx, deps.Store, []byte(rand.Text()))
	if err != nil {
		return nil, fmt.Errorf("demo seed: %w", err)
	}
	// An export of the demo admin, for GET /exports/{export_id} (queued:
	// no export worker runs here).
	co := doc.Companies[0]
	admin := co.UserByRole("admin")
	ex, err := deps.Store.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: co.ID, UserID: admin.ID, Format: "csv", Filters: "{}", Query: "{}"})
	if err != nil {
		return nil, fmt.Errorf("demo export: %w", err)
	}
	co.Resources["export_ids"] = []string{ex.ID}
	// A bulk triage operation, for GET /issues/triage/{operation_id}
	// (queued: no worker runs here).
	op, err := deps.Store.Triage.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: co.ID, UserID: admin.ID, Status: "false_positive", Filters: "{}", Query: "{}"})
	if err != nil {
		return nil, fmt.Errorf("demo triage operation: %w", err)
	}
	co.Resources["triage_operation_ids"] = []string{op.ID}
	rec := &recorder{}
	// Store is shared by pointer with the authenticator, so both use this client.
	deps.Store.SetClient(dynamodb.New(deps.Store.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, rec.attach)
	}))
	return &world{deps: deps, company: doc.Companies[0], calls: rec}, nil
}

// prepare decodes an event and points it at the demo data: the credential
// becomes the demo admin's API key, and the parameters its sample names
// take the seeded records' ids. It returns the event's route and payload.
func (w *world) prepare(raw []byte) (routes.Route, []byte, error) {
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		return routes.Route{}, nil, fmt.Errorf("not an API Gateway proxy event: %w", err)
	}
	r, ok := routeOf(ev.Resource, ev.HTTPMethod)
	if !ok {
		return routes.Route{}, nil, fmt.Errorf("%s %s is not a route of the table", ev.HTTPMethod, ev.Resource)
	}
	if _, ok := ev.Headers[auth.APIKeyHeader]; ok {
		key := w.company.UserByRole("admin").APIKey
		ev.Headers[auth.APIKeyHeader] = key
		if ev.MultiValueHeaders != nil {
			ev.MultiValueHeaders[auth.APIKeyHeader] = []string{key}
		}
	}
	if r.Access == routes.PathToken {
		ev.PathParameters[routes.TokenParam] = w.company.UserByRole("admin").APIKey
	}
	s, _ := sampleOf(r)
	for param, res := range s.Seeded {
		v, err := w.resource(res)
		if err != nil {
			return r, nil, err
		}
		if _, ok := ev.PathParameters[param]; ok {
			ev.PathParameters[param] = v
		}
		if _, ok := ev.QueryStringParameters[param]; ok {
			ev.QueryStringParameters[param] = v
			if ev.MultiValueQueryStringParameters != nil {
				ev.MultiValueQueryStringParameters[param] = []string{v}
			}
		}
	}
	ev.Path = r.FullPath()
	for _, p := range r.PathParams() {
		ev.Path = strings.Replace(ev.Path, "{"+p+"}", url.PathEscape(ev.PathParameters[p]), 1)
	}
	ev.RequestContext.Path = "/" + ev.RequestContext.Stage + ev.Path
	payload, err := json.Marshal(ev)
	return r, payload, err
}

// resource returns a demo resource id (the first, for a list) as a path or
// query value.
func (w *world) resource(name string) (string, error) {
	v := w.company.Resources[name]
	switch l := v.(type) {
	case []string:
		if len(l) > 0 {
			v = l[0]
		}
	case []int64:
		if len(l) > 0 {
			v = l[0]
		}
	case []any:
		if len(l) > 0 {
			v = l[0]
		}
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int:
		return strconv.Itoa(v), nil
	case float64: // read back from the demo marker's JSON
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	default:
		return "", fmt.Errorf("demo data has no resource %q (has %v)", name, slices.Sorted(maps.Keys(w.company.Resources)))
	}
}

// invoke runs payload through group's Lambda entry exactly as the runtime
// does: the bytes are decoded by lambda.NewHandler into the function
// lambdahttp.Start gives lambda.Start. It returns the response and the IAM
// actions of the DynamoDB calls the invocation made.
func (w *world) invoke(ctx context.Context, group string, payload []byte) (events.APIGatewayProxyResponse, []string, error) {
	var resp events.APIGatewayProxyResponse
	newHandler, ok := registry.Constructors[group]
	if !ok {
		return resp, nil, fmt.Errorf("group %s is not in internal/registry", group)
	}
	h := lambda.NewHandler(lambdahttp.Handler(newHandler(w.deps)))
	w.calls.reset()
	out, err := h.Invoke(ctx, payload)
	if err != nil {
		return resp, nil, err
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return resp, nil, err
	}
	return resp, w.calls.actions(), nil
}

// recorder collects the IAM actions of the DynamoDB calls made through a
// client.
type recorder struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (r *recorder) attach(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordIAMActions",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			r.add(iamActions(middleware.GetOperationName(ctx), in.Parameters)...)
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// iamActions maps a DynamoDB call to the IAM actions that authorise it: a
// transaction needs the action of each of its items.
func iamActions(op string, params any) []string {
	tx, ok := params.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return []string{"dynamodb:" + op}
	}
	var out []string
	for _, it := range tx.TransactItems {
		switch {
		case it.Put != nil:
			out = append(out, "dynamodb:PutItem")
		case it.Update != nil:
			out = append(out, "dynamodb:UpdateItem")
		case it.Delete != nil:
			out = append(out, "dynamodb:DeleteItem")
		case it.ConditionCheck != nil:
			out = append(out, "dynamodb:ConditionCheckItem")
		}
	}
	return out
}

func (r *recorder) add(actions ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for _, a := range actions {
		r.seen[a] = true
	}
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = nil
}

func (r *recorder) actions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.seen))
	for a := range r.seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
