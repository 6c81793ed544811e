package schema

import (
	"github.com/acme/codescan-api/shared/store/ddb"
)

// InlineComments is an integration's setting of inline review comments:
// when enabled, a pull request's decoration comments on the new findings
// that sit on lines the pull request adds, at most MaxPerScan a scan.
type InlineComments struct {
	Enabled    bool `dynamodbav:"enabled" json:"enabled"`
	MaxPerScan int  `dynamodbav:"max_per_scan" json:"max_per_scan"`
}

// Bounds of InlineComments.MaxPerScan.
const (
	DefaultInlinePerScan = 10
	MaxInlinePerScan     = 50
)

// PerScan is how many inline comments one decoration may post: 0 when the
// setting is absent or off, else MaxPerScan (DefaultInlinePerScan when
// unset), at most MaxInlinePerScan.
func (c *InlineComments) PerScan() int {
	if c == nil || !c.Enabled {
		return 0
	}
	if c.MaxPerScan <= 0 {
		return DefaultInlinePerScan
	}
	return min(c.MaxPerScan, MaxInlinePerScan)
}

// PRReviewLinkPrefix is the sort key prefix of the review-comment links of
// one pull request through one integration.
func PRReviewLinkPrefix(integrationUUID, repo, number string) string {
	return "PRREVIEW#" + integrationUUID + "#" + repo + "#" + number + "#"
}

// PRReviewLinkKey is the key of the link between one finding (its issue id)
// and its review comment on a pull request: it is posted once.
func PRReviewLinkKey(companyID int64, integrationUUID, repo, number, issueID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: PRReviewLinkPrefix(integrationUUID, repo, number) + issueID}
}
