package store

import "fmt"

// CompanyPK is the partition of everything a company owns.
func CompanyPK(companyID int64) string { return fmt.Sprintf("C#%d", companyID) }
