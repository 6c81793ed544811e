package schema

// Counter is a counter item's count.
type Counter struct {
	Count int64 `dynamodbav:"count"`
}

// Collections whose size a company counter keeps (see ledger.TxCount).
const (
	CountTeams        = "teams"
	CountIntegrations = "integrations"
)
