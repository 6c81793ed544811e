package gitlabhost

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// restExcerpt is GitLab's own OpenAPI description cut down to the
// operations we call (testdata/README.md says where it comes from and
// what was left out). Embedded so that tests in any package can validate.
//
//go:embed testdata/gitlab-rest-excerpt.yaml
var restExcerpt []byte

// ErrNotDescribed wraps the error for a request whose method and path are
// not an operation of the description: we would be calling an endpoint
// GitLab does not have (or one we never vetted).
var ErrNotDescribed = errors.New("request not described by GitLab's OpenAPI description")

// Validator checks requests against the excerpt of GitLab's description.
// It is safe for concurrent use.
type Validator struct {
	router routers.Router
}

// NewValidator loads and checks the embedded description.
func NewValidator() (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(restExcerpt)
	if err != nil {
		return nil, fmt.Errorf("gitlabhost: load description: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("gitlabhost: description is not valid OpenAPI: %w", err)
	}
	// The description's paths carry /api/v4; hosts are loopback addresses
	// (and a self-managed GitLab may sit under a relative URL, which the
	// server strips first), so routes are matched on the path alone.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("gitlabhost: build router: %w", err)
	}
	return &Validator{router: router}, nil
}

// Operation is a described operation a request was matched to.
type Operation struct {
	ID         string            // GitLab's operationId, e.g. "getApiV4User"
	PathParams map[string]string // e.g. id (still URL-encoded), noteable_id
	route      *routers.Route
}

// Match finds the described operation for r, whose path is matched in its
// escaped form: a project's path is one segment ("group%2Fproject"), as
// GitLab reads it. The error wraps ErrNotDescribed when there is none.
func (v *Validator) Match(r *http.Request, apiPath string) (Operation, error) {
	bare := r.Clone(r.Context())
	setPath(bare, apiPath)
	route, params, err := v.router.FindRoute(bare)
	if err != nil {
		return Operation{}, fmt.Errorf("%s %s: %w (%v)", r.Method, apiPath, ErrNotDescribed, err)
	}
	return Operation{ID: route.Operation.OperationID, PathParams: params, route: route}, nil
}

// Validate checks r (body passed separately): the path and query
// parameters, the content type and the presence of a body, as the
// description states them.
func (v *Validator) Validate(r *http.Request, apiPath string, body []byte, op Operation) error {
	req := r.Clone(r.Context())
	setPath(req, apiPath)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: op.PathParams, Route: op.route,
		Options: &openapi3filter.Options{
			MultiError: true, SkipSettingDefaults: true,
			// A body on an operation that takes none (a GET) is a mistake too.
			RejectWhenRequestBodyNotSpecified: true,
			// Authentication (PRIVATE-TOKEN) is the server's to check.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s (%s): %w", r.Method, apiPath, op.ID, err)
	}
	return nil
}

// setPath points r at the escaped API path apiPath (the router matches
// the escaped form, keeping %2F inside a segment).
func setPath(r *http.Request, apiPath string) {
	r.URL.RawPath = apiPath
	if p, err := url.PathUnescape(apiPath); err == nil {
		r.URL.Path = p
	}
}
