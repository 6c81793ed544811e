// Package apicontract holds what the loopback hosts of third-party APIs
// (internal/githost, internal/gitlabhost) share: a vendor's published
// OpenAPI description loaded and checked (Contract), requests our clients
// send and answers a host gives validated against it, a listener on
// 127.0.0.1 only (Loopback) and an answer buffered until it is validated
// (Recorder). Each host keeps its own routes and wire format.
package apicontract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// ErrNotDescribed wraps the error for a request whose method and path are
// not an operation of the description: we would be calling an endpoint
// the vendor does not have (or one we never vetted).
var ErrNotDescribed = errors.New("request not described by the vendor's API description")

// Contract is a vendor's API description (or an excerpt of it), ready to
// match and validate requests. It is safe for concurrent use.
type Contract struct {
	name   string // the vendor's, for errors: "GitHub's REST description"
	doc    *openapi3.T
	router routers.Router
}

// Load parses and checks the description in data (JSON or YAML). Its
// servers are dropped: loopback hosts have addresses of their own, and a
// vendor's API may sit under a prefix the host strips first, so routes are
// matched on the path alone.
func Load(name string, data []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: load: %w", name, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s: not valid OpenAPI: %w", name, err)
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: build router: %w", name, err)
	}
	return &Contract{name: name, doc: doc, router: router}, nil
}

// OperationIDs lists the described operations, sorted.
func (c *Contract) OperationIDs() []string {
	var ids []string
	for _, item := range c.doc.Paths.Map() {
		for _, op := range item.Operations() {
			ids = append(ids, op.OperationID)
		}
	}
	slices.Sort(ids)
	return ids
}

// Operation is a described operation a request was matched to.
type Operation struct {
	ID         string            // the vendor's operationId
	PathParams map[string]string // as matched (still escaped)
	route      *routers.Route
}

// Match finds the described operation for r at the API path rawPath (in
// its escaped form, so that an escaped "/" stays inside one segment, and
// without any prefix the host strips). The error wraps ErrNotDescribed
// when there is none.
func (c *Contract) Match(r *http.Request, rawPath string) (Operation, error) {
	route, params, err := c.router.FindRoute(atPath(r, rawPath, nil))
	if err != nil {
		return Operation{}, fmt.Errorf("%s %s: %w: %s (%v)", r.Method, rawPath, ErrNotDescribed, c.name, err)
	}
	return Operation{ID: route.Operation.OperationID, PathParams: params, route: route}, nil
}

// ValidateRequest checks r at rawPath, whose body is passed separately
// because the caller has usually consumed it: the path and query
// parameters, the content type and the body must match op's schemas, and
// an operation that takes no body must get none.
func (c *Contract) ValidateRequest(r *http.Request, rawPath string, body []byte, op Operation) error {
	if err := openapi3filter.ValidateRequest(context.Background(), requestInput(r, rawPath, body, op)); err != nil {
		return fmt.Errorf("%s %s (%s): %w", r.Method, rawPath, op.ID, err)
	}
	return nil
}

// ValidateResponse checks an answer to r against op's declared response
// for that status. Statuses an operation does not declare (a 401 or a rate
// limit on most operations) are not checked, as vendors' descriptions
// leave them out.
func (c *Contract) ValidateResponse(r *http.Request, rawPath string, op Operation, status int, header http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: requestInput(r, rawPath, nil, op),
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("answer %d to %s %s (%s): %w", status, r.Method, rawPath, op.ID, err)
	}
	return nil
}

func requestInput(r *http.Request, rawPath string, body []byte, op Operation) *openapi3filter.RequestValidationInput {
	return &openapi3filter.RequestValidationInput{
		Request:    atPath(r, rawPath, body),
		PathParams: op.PathParams,
		Route:      op.route,
		Options: &openapi3filter.Options{
			MultiError: true,
			// Defaults must not be written into the request we then serve.
			SkipSettingDefaults: true,
			// A body on an operation that takes none (a GET) is a mistake too.
			RejectWhenRequestBodyNotSpecified: true,
			// Credentials are the host's to check (and to answer 401).
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
	}
}

// atPath is a copy of r at the escaped API path rawPath, carrying body.
func atPath(r *http.Request, rawPath string, body []byte) *http.Request {
	req := r.Clone(r.Context())
	req.URL.RawPath = rawPath
	req.URL.Path = rawPath
	if p, err := url.PathUnescape(rawPath); err == nil {
		req.URL.Path = p
	}
	req.Body = http.NoBody
	req.ContentLength = int64(len(body))
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return req
}
