package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// A trend scope (the company, projectID 0, or one project) keeps its
// records in one partition: a day record per UTC day that saw a change
// (TrendDayPrefix + "2006-01-02") and one totals record (TrendTotalsSK),
// which sorts after every day, so one range reads the days from a date on
// and the totals.
const (
	TrendDayPrefix = "DAY#"
	TrendTotalsSK  = "TOTALS"
)

// TrendPK is a trend scope's partition.
func TrendPK(companyID, projectID int64) string {
	if projectID == 0 {
		return CompanyPK(companyID) + "#TREND"
	}
	return fmt.Sprintf("%s#TREND#P%d", CompanyPK(companyID), projectID)
}

// TrendDayKey is a scope's record of one day ("2006-01-02").
func TrendDayKey(companyID, projectID int64, date string) ddb.Key {
	return ddb.Key{PK: TrendPK(companyID, projectID), SK: TrendDayPrefix + date}
}

// TrendTotalsKey is a scope's totals record.
func TrendTotalsKey(companyID, projectID int64) ddb.Key {
	return ddb.Key{PK: TrendPK(companyID, projectID), SK: TrendTotalsSK}
}
