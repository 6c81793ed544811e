package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The quality findings' keys (store/quality): a finding is in its
// company's partition under QualityScanPrefix (then NewestFirst), paged by
// number on the Offset partition QualityScanOffsetPK; listed on GSI1 by
// project (QualityProjectPK) and on GSI2 by scan and classification
// (QualityClassPK); counted per project (QualityProjectCount) and per scan
// and classification (the directory partition QualityDirPK, SK
// QualityClassKey).

// QualityIssueSKPrefix begins the sort key of every quality finding.
const QualityIssueSKPrefix = "QI#"

// QualityScanPrefix begins the sort key of every quality finding of a
// scan.
func QualityScanPrefix(scanID string) string { return QualityIssueSKPrefix + scanID + "#" }

// QualityScanOffsetPK is the Offset index partition of a scan's quality
// findings.
func QualityScanOffsetPK(companyID int64, scanID string) string {
	return CompanyPK(companyID) + "#" + QualityIssueSKPrefix + scanID
}

// QualityClassKey is a classification name's key: a digest, as names are
// free text.
func QualityClassKey(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:16])
}

// QualityClassPK is the index partition of a scan's quality findings of
// one classification.
func QualityClassPK(companyID int64, scanID, name string) string {
	return fmt.Sprintf("%s#QC#%s#%s", CompanyPK(companyID), scanID, QualityClassKey(name))
}

// QualityDirPK is the partition of a scan's directory of classifications.
func QualityDirPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#QDIR#%s", CompanyPK(companyID), scanID)
}

// QualityProjectPK is the index partition of a project's quality
// findings, newest first.
func QualityProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#QP#%d", CompanyPK(companyID), projectID)
}

// QualityProjectCount is the counted collection of a project's quality
// findings.
func QualityProjectCount(projectID int64) string { return fmt.Sprintf("QUALITY#P%012d", projectID) }
