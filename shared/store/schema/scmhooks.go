package schema

import (
	"fmt"
	"strconv"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The keys and items of a source-code host's inbound webhook: the global
// look-up of an integration by uuid, the memory of the deliveries and
// commands acted on, the link of a host login to a user, and the prefix of
// a pull request's summary links.

// SCMHookKey is the global look-up of an integration's inbound webhook:
// the route knows only the uuid in its path, every other key starts with
// the company. Written when the integration's webhook secret is set.
func SCMHookKey(integrationUUID string) ddb.Key {
	return ddb.Key{PK: "SCMHOOK#" + integrationUUID, SK: "SCMHOOK"}
}

// SCMHookRef points an integration uuid at its company. Its put is
// conditional on no other company's holding the uuid, so one uuid never
// reaches two companies' integrations.
type SCMHookRef struct {
	ddb.Key
	CompanyID       int64  `dynamodbav:"company_id"`
	IntegrationUUID string `dynamodbav:"integration_uuid"`
}

// SCMCommentKey remembers a host comment whose command was acted on: the
// signature covers the body, not the delivery id, so a captured body sent
// again under a new delivery id is still the same comment.
func SCMCommentKey(companyID int64, integrationUUID string, commentID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("SCMCOMMENT#%s#%d", integrationUUID, commentID)}
}

// SCMClaim is a remembered comment: claimed while it is acted
// on, done once it was, failed when acting failed so that the host's
// redelivery may claim it again. It expires with the table's TTL.
type SCMClaim struct {
	ddb.Key
	State     string `dynamodbav:"state"`
	ClaimedAt string `dynamodbav:"claimed_at"` // sortable (ddb.SortableTime)
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// The states of an SCMClaim.
const (
	SCMClaimed = "claimed"
	SCMDone    = "done"
	SCMFailed  = "failed"
)

// SCMLoginKey guards a host login's uniqueness inside a company and finds
// its user (login lower case).
func SCMLoginKey(companyID int64, login string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SCMLOGIN#" + login}
}

// SCMLoginRef points a host login at the company's user.
type SCMLoginRef struct {
	ddb.Key
	UserID int64 `dynamodbav:"user_id"`
}

// PRLinkPrefix is the sort key prefix of the summary links of one pull
// request decorated through an integration (store/delivery's PRTarget
// keys: PRLINK#<integration>#<repo>#<number>#<project>); a repository
// path never holds '#', so the prefix names exactly that pull request.
func PRLinkPrefix(integrationUUID, repo, number string) string {
	return "PRLINK#" + integrationUUID + "#" + repo + "#" + number + "#"
}

// PRLinkKey is the key of a pull request's summary link for one project.
func PRLinkKey(companyID int64, integrationUUID, repo, number string, projectID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: PRLinkPrefix(integrationUUID, repo, number) + strconv.FormatInt(projectID, 10)}
}
