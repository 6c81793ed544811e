package schema

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
