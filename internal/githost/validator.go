package githost

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// restExcerpt is GitHub's own REST description cut down to the operations we
// call (testdata/README.md says where it comes from and how it was cut). It
// is embedded so that tests in any package can validate without knowing
// where this directory is.
//
//go:embed testdata/github-rest-excerpt.json
var restExcerpt []byte

// EnterprisePrefix is where GitHub Enterprise Server serves the REST API.
const EnterprisePrefix = "/api/v3"

// ErrNotDescribed wraps the error for a request whose method and path are
// not an operation of the description: we would be calling an endpoint
// GitHub does not have (or one we never vetted).
var ErrNotDescribed = errors.New("request not described by GitHub's REST description")

// Validator checks requests against the excerpt of GitHub's REST
// description. It is safe for concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// NewValidator loads and checks the embedded description.
func NewValidator() (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(restExcerpt)
	if err != nil {
		return nil, fmt.Errorf("githost: load description: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("githost: description is not valid OpenAPI: %w", err)
	}
	// The description names https://api.github.com as its only server. Our
	// hosts are loopback addresses, and Enterprise serves the same paths
	// under /api/v3, so routes are matched on the path alone (Validate
	// strips the Enterprise prefix first).
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("githost: build router: %w", err)
	}
	return &Validator{doc: doc, router: router}, nil
}

// Operation is a described operation a request was matched to.
type Operation struct {
	ID         string            // GitHub's operationId, e.g. "issues/create-comment"
	PathParams map[string]string // e.g. owner, repo, issue_number
	route      *routers.Route
}

// Match finds the described operation for r (its path with or without the
// Enterprise prefix). The error wraps ErrNotDescribed when there is none.
func (v *Validator) Match(r *http.Request) (Operation, error) {
	bare := r.Clone(r.Context())
	bare.URL.Path = strings.TrimPrefix(r.URL.Path, EnterprisePrefix)
	bare.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, EnterprisePrefix)
	route, params, err := v.router.FindRoute(bare)
	if err != nil {
		return Operation{}, fmt.Errorf("%s %s: %w (%v)", r.Method, r.URL.Path, ErrNotDescribed, err)
	}
	return Operation{ID: route.Operation.OperationID, PathParams: params, route: route}, nil
}

// Validate checks r, whose body is passed separately because the caller has
// usually consumed it: the operation must be described, and the path and
// query parameters and the JSON body must match its schemas.
func (v *Validator) Validate(r *http.Request, body []byte) error {
	op, err := v.Match(r)
	if err != nil {
		return err
	}
	return v.validateRequest(r, body, op)
}

func (v *Validator) validateRequest(r *http.Request, body []byte, op Operation) error {
	input := requestInput(r, body, op)
	if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil {
		return fmt.Errorf("%s %s (%s): %w", r.Method, r.URL.Path, op.ID, err)
	}
	return nil
}

// ValidateResponse checks an answer to r against the operation's declared
// response for that status. Statuses an operation does not declare (a 401
// or a rate limit on most operations) are not checked, as GitHub's
// description leaves them out.
func (v *Validator) ValidateResponse(r *http.Request, op Operation, status int, header http.Header, body []byte) error {
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: requestInput(r, nil, op),
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("answer %d to %s %s (%s): %w", status, r.Method, r.URL.Path, op.ID, err)
	}
	return nil
}

func requestInput(r *http.Request, body []byte, op Operation) *openapi3filter.RequestValidationInput {
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	return &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: op.PathParams,
		Route:      op.route,
		Options: &openapi3filter.Options{
			MultiError: true,
			// Defaults must not be written into the request we then serve.
			SkipSettingDefaults: true,
			// A body on an operation that takes none (a GET) is a mistake too.
			RejectWhenRequestBodyNotSpecified: true,
		},
	}
}
