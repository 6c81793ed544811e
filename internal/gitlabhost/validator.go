package gitlabhost

import (
	_ "embed"

	"github.com/acme/codescan-api/internal/apicontract"
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
var ErrNotDescribed = apicontract.ErrNotDescribed

// Operation is a described operation a request was matched to (ID is
// GitLab's operationId, e.g. "getApiV4User"; PathParams are still
// URL-encoded: a project's path is one segment, "group%2Fproject", as
// GitLab reads it).
type Operation = apicontract.Operation

// NewValidator loads and checks the embedded description. Its paths carry
// /api/v4; the server strips a self-managed instance's relative URL root
// first and matches the escaped path.
func NewValidator() (*apicontract.Contract, error) {
	return apicontract.Load("GitLab's OpenAPI description", restExcerpt)
}
