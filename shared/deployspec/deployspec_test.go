package deployspec_test

import (
	"testing"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/reportstore"
)

// The deployment's copies of the report bucket's names and lifetimes are
// the code's.
func TestReportBucketNames(t *testing.T) {
	if deployspec.ReportsEnv != reportstore.EnvBucket || deployspec.ReportsPrefix != reportstore.ReportsPrefix ||
		deployspec.ChunksPrefix != reportstore.ChunksPrefix || deployspec.ReportDays != reportstore.ReportDays ||
		deployspec.ChunkDays != reportstore.ChunkDays || deployspec.SourcesPrefix != reportstore.SourcesPrefix ||
		deployspec.SourceDays != reportstore.SourceDays || deployspec.ExportsPrefix != reportstore.ExportsPrefix ||
		deployspec.ExportDays != reportstore.ExportDays {
		t.Fatal("deployspec and reportstore disagree on the report bucket")
	}
}
