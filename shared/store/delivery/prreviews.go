package delivery

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// A finding's inline review comment on a pull request is one object on the
// host per (integration, repository, pull request, finding). Its link item
// is written before the comment is posted (a lease, as the summary's link)
// and records the comment's id after: a later attempt that finds the id
// posts nothing, and one that finds a link without an id (an attempt died
// between the post and the record) looks for the comment on the host
// before it posts.

// ReviewLink is the link item of one finding's review comment.
type ReviewLink commentLink

// Exists reports whether the link was written before (by an earlier
// attempt), with or without a comment id.
func (l ReviewLink) Exists() bool { return l.PK != "" }

// ReviewTarget names one finding's review comment on a pull request.
type ReviewTarget struct {
	CompanyID   int64
	Integration string // uuid
	Repo        string // owner/name
	Number      string
	IssueID     string
}

func (r ReviewTarget) key() ddb.Key {
	return schema.PRReviewLinkKey(r.CompanyID, r.Integration, r.Repo, r.Number, r.IssueID)
}

// ClaimReviewLink takes the lease of a finding's review link for owner
// until now+lease (creating the link) and returns the link as it was
// before: ErrLinkBusy while another owner's lease runs.
func (s *Deliveries) ClaimReviewLink(ctx context.Context, r ReviewTarget, owner string, now time.Time, lease time.Duration) (ReviewLink, error) {
	return claimLink[ReviewLink](ctx, s, r.key(), owner, now, lease, types.ReturnValueAllOld)
}

// ReleaseReviewLink records the comment's id (0 keeps the one known) and
// gives the lease back, if owner still holds it (ErrLinkBusy otherwise).
func (s *Deliveries) ReleaseReviewLink(ctx context.Context, r ReviewTarget, owner string, commentID int64) error {
	return releaseLink(ctx, s, r.key(), owner, commentID)
}
