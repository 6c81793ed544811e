package issues

import (
	"errors"
	"net/http"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
)

// errSCANotFound is the spec's body; a malformed id gets it too, since it
// names no SCA issue either.
var errSCANotFound = httpapi.UploadError(httpapi.KindNotFound, "SCA issue not found")

// sca answers GET /issues/sca/{issue_id}.
func (h handlers) sca(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	i, err := h.store.SCA.GetSCAIssue(ctx, auth.FromContext(ctx).CompanyID, r.PathValue("issue_id"))
	if errors.Is(err, ddb.ErrNotFound) {
		return errSCANotFound
	}
	if err != nil {
		return err
	}
	return h.writeSCA(ctx, w, auth.FromContext(ctx).CompanyID, i)
}
