package delivery

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// ChannelPullRequest is the channel of pull-request decorations: the
// recipient is a source-code-host integration (its uuid).
const ChannelPullRequest = "pull_request"

// A pull request's summary comment is one object on the host per
// (integration, repository, pull request, project). Its link item maps
// that to the comment's id on the host, so a later scan edits it, and
// holds a lease while a decoration writes it: two scans of one pull
// request completing at once must not both create a comment.

// PRLink is the link item of a pull request's summary comment.
type PRLink commentLink

// PRTarget names a pull request's summary comment.
type PRTarget struct {
	CompanyID   int64
	Integration string // uuid
	Repo        string // owner/name
	Number      string
	ProjectID   int64
}

func (p PRTarget) key() ddb.Key {
	return schema.PRLinkKey(p.CompanyID, p.Integration, p.Repo, p.Number, p.ProjectID)
}

// ClaimPRLink takes the lease of a pull request's link for owner until
// now+lease (creating the link), and returns the link; ErrLinkBusy while
// another owner's lease runs.
func (s *Deliveries) ClaimPRLink(ctx context.Context, p PRTarget, owner string, now time.Time, lease time.Duration) (PRLink, error) {
	return claimLink[PRLink](ctx, s, p.key(), owner, now, lease, types.ReturnValueAllNew)
}

// ReleasePRLink records the comment's id (0 keeps the one known) and
// gives the lease back, if owner still holds it (ErrLinkBusy otherwise).
func (s *Deliveries) ReleasePRLink(ctx context.Context, p PRTarget, owner string, commentID int64) error {
	return releaseLink(ctx, s, p.key(), owner, commentID)
}
