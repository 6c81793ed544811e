package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// ScanSKPrefix begins the sort key of every scan item (in its company's
// partition). The ingester's stream filter (deployspec.IngestFilter) and
// its reader (ingester.JobOf) select scan items by it, through
// scans.SKPrefix.
const ScanSKPrefix = "SCAN#"

// ScanSK is the sort key of a scan.
func ScanSK(scanID string) string { return ScanSKPrefix + scanID }

// ScanRunSK is the sort key of the look-up item of a run id inside a
// company (it points at the run's scan).
func ScanRunSK(runID string) string { return "SCANRUN#" + runID }

// The scan lists' keys (store/scans scanlist.go): a project's scans are
// GSI1 partition ScanProjectPK, a project branch's GSI2 partition
// ScanBranchPK, the company's the log partition ScanLogPK; each counted
// under ScanCount.

// ScanProjectPK is the index partition of a project's scans.
func ScanProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#SCANS#P%012d", CompanyPK(companyID), projectID)
}

// ScanBranchPK is the index partition of a project branch's scans.
func ScanBranchPK(companyID, projectID int64, branch string) string {
	return ScanProjectPK(companyID, projectID) + "#" + BranchHash(branch)
}

// ScanLogPK is the partition of a company's scan log items.
func ScanLogPK(companyID int64) string { return CompanyPK(companyID) + "#SCANLOG" }

// ScanCount is the counted collection of a scope's scans: the company's
// (projectID 0), a project's, or a project branch's.
func ScanCount(projectID int64, branch string) string {
	switch {
	case projectID == 0:
		return "SCANS"
	case branch == "":
		return fmt.Sprintf("SCANS#P%012d", projectID)
	}
	return fmt.Sprintf("SCANS#P%012d#%s", projectID, BranchHash(branch))
}

// IngestProcessingPK is the operator partition of the markers of scans
// waiting for the ingester (store/scans stalled.go).
const IngestProcessingPK = "INGEST#PROCESSING"

// IngestProcessingKey is the marker of a scan waiting for the ingester,
// sorted by its creation (unix ms), then company and scan.
func IngestProcessingKey(createdMillis, companyID int64, scanID string) ddb.Key {
	return ddb.Key{PK: IngestProcessingPK, SK: fmt.Sprintf("%013d#%d#%s", createdMillis, companyID, scanID)}
}

// ScanCIDataKey is a scan's CI metadata; it sorts outside ScanSKPrefix, so
// a range of scans never holds it.
func ScanCIDataKey(companyID int64, scanID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SCANCI#" + scanID}
}

// ScanSourcesKey counts a run's source files; it sorts outside
// ScanSKPrefix too.
func ScanSourcesKey(companyID int64, runID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SCANSRC#" + runID}
}

// UploadRunSKPrefix begins the sort key of every upload run; it is
// outside ScanSKPrefix, and UploadQuotaKey does not begin with it, so the
// runs' range holds neither a scan nor the quota.
const UploadRunSKPrefix = "UPLOAD#"

// UploadRunKey is an upload run's key.
func UploadRunKey(companyID int64, runID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: UploadRunSKPrefix + runID}
}

// UploadQuotaKey is a company's upload quota item.
func UploadQuotaKey(companyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "UPLOADS"}
}
