package demo

import (
	"context"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store"
)

func init() { register(30, seedUploads) }

// sampleReports are SARIF reports of three scanners, in the repository, to
// try POST /scan-upload with (paths relative to the repository root).
var sampleReports = []string{
	"functions/uploads/testdata/semgrep.sarif",
	"functions/uploads/testdata/codeql.sarif",
	"functions/uploads/testdata/gosec.sarif",
}

// seedUploads names what a client needs to try the upload routes: a run id
// no scan has yet (POST /scan-upload with it creates the run, which then
// accepts /ci-data-upload and /git-config-upload) and sample reports. The
// findings seed's third-party run (third_party_run_ids) accepts the two
// metadata uploads right away.
func seedUploads(_ context.Context, _ *store.Store, c *Company) error {
	c.Resources["scan_upload_run_id"] = uuid.NewString()
	c.Resources["scan_upload_sample_reports"] = sampleReports
	return nil
}
