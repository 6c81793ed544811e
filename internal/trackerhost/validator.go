package trackerhost

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The published descriptions, cut down to the operations we call
// (testdata/README.md says where each comes from and how it was cut).
var (
	//go:embed testdata/github-issues-excerpt.json
	githubExcerpt []byte
	//go:embed testdata/jira-platform-v3-excerpt.json
	jiraExcerpt []byte
)

// ErrNotDescribed wraps the error of a request whose method and path are
// no operation of the description.
var ErrNotDescribed = errors.New("request not described by the vendor's description")

// Validator checks requests against one description. Safe for concurrent use.
type Validator struct {
	name   string
	router routers.Router
}

// NewGitHubValidator validates against the excerpt of GitHub's REST description.
func NewGitHubValidator() (*Validator, error) { return newValidator("github", githubExcerpt) }

// NewJiraValidator validates against the excerpt of Jira Cloud's platform
// REST v3 description.
func NewJiraValidator() (*Validator, error) { return newValidator("jira", jiraExcerpt) }

func newValidator(name string, raw []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: load description: %w", name, err)
	}
	// The descriptions' own examples are not ours to check (some break
	// their schemas: GitHub's issue example lacks assignee).
	if err := doc.Validate(loader.Context, openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("%s: description is not valid OpenAPI: %w", name, err)
	}
	// Routes are matched on the path alone: the servers are loopback.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: build router: %w", name, err)
	}
	return &Validator{name: name, router: router}, nil
}

// Validate checks r (its body passed separately): the operation must be
// described, and its parameters and JSON body must match the schemas. It
// returns the operation's id.
func (v *Validator) Validate(r *http.Request, body []byte) (string, error) {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w (%v)", r.Method, r.URL.Path, ErrNotDescribed, err)
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, SkipSettingDefaults: true, RejectWhenRequestBodyNotSpecified: true,
			// Credentials are checked by the server itself (the token it knows).
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return route.Operation.OperationID, fmt.Errorf("%s %s %s (%s): %w", v.name, r.Method, r.URL.Path, route.Operation.OperationID, err)
	}
	return route.Operation.OperationID, nil
}
