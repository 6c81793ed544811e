package githost

import (
	_ "embed"
	"net/http"
	"strings"

	"github.com/acme/codescan-api/internal/apicontract"
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
var ErrNotDescribed = apicontract.ErrNotDescribed

// Validator checks requests against the excerpt of GitHub's REST
// description (apicontract does the checking; this adds GitHub's paths:
// with or without the Enterprise prefix). It is safe for concurrent use.
type Validator struct {
	contract *apicontract.Contract
}

// Operation is a described operation a request was matched to
// (ID is GitHub's operationId, e.g. "issues/create-comment").
type Operation = apicontract.Operation

// NewValidator loads and checks the embedded description.
func NewValidator() (*Validator, error) {
	c, err := apicontract.Load("GitHub's REST description", restExcerpt)
	if err != nil {
		return nil, err
	}
	return &Validator{contract: c}, nil
}

// apiPath is r's escaped path without the Enterprise prefix: the
// description names https://api.github.com as its only server, and
// Enterprise serves the same paths under /api/v3.
func apiPath(r *http.Request) string {
	return strings.TrimPrefix(r.URL.EscapedPath(), EnterprisePrefix)
}

// Match finds the described operation for r (its path with or without the
// Enterprise prefix). The error wraps ErrNotDescribed when there is none.
func (v *Validator) Match(r *http.Request) (Operation, error) {
	return v.contract.Match(r, apiPath(r))
}

// Validate checks r, whose body is passed separately because the caller has
// usually consumed it: the operation must be described, and the path and
// query parameters and the JSON body must match its schemas.
func (v *Validator) Validate(r *http.Request, body []byte) error {
	op, err := v.Match(r)
	if err != nil {
		return err
	}
	return v.contract.ValidateRequest(r, apiPath(r), body, op)
}

// ValidateResponse checks an answer to r against the operation's declared
// response for that status (undeclared statuses are not checked).
func (v *Validator) ValidateResponse(r *http.Request, op Operation, status int, header http.Header, body []byte) error {
	return v.contract.ValidateResponse(r, apiPath(r), op, status, header, body)
}
