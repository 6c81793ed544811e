package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

// The link items of comments on a source-code host (a pull request's
// summary, a finding's review comment) share one lease: lease_owner holds
// it until lease_until, and the comment's id is recorded when the lease is
// given back. These two functions are that lease, for both.

// commentLink is the item of a comment's link: the comment's id on the
// host, once known, and the lease (PRLink and ReviewLink are this item).
type commentLink struct {
	ddb.Key
	CommentID  int64  `dynamodbav:"comment_id,omitempty"`
	LeaseOwner string `dynamodbav:"lease_owner,omitempty"`
	LeaseUntil string `dynamodbav:"lease_until,omitempty"`
	UpdatedAt  string `dynamodbav:"updated_at,omitempty"`
}

// ErrLinkBusy is returned when another decoration holds the link's lease.
var ErrLinkBusy = errors.New("another decoration of this pull request is in progress")

// claimLink takes the lease of the link at k for owner until now+lease,
// creating the link, and decodes into T the item as the update returns it
// (rv: ALL_NEW for the link as it is now, ALL_OLD for the link as an
// earlier attempt left it). ErrLinkBusy while another owner's lease runs.
func claimLink[T any](ctx context.Context, s *Deliveries, k ddb.Key, owner string, now time.Time, d time.Duration, rv types.ReturnValue) (T, error) {
	var out T
	item, err := lease.Claim(ctx, s.t, k, owner, now, d, nil, rv)
	if errors.Is(err, lease.ErrClaimed) {
		return out, ErrLinkBusy
	}
	if err != nil {
		return out, err
	}
	return out, attributevalue.UnmarshalMap(item, &out)
}

// releaseLink records the comment's id (0 keeps the one known) and gives
// the lease back, if owner still holds it: ErrLinkBusy when the lease ran
// out and another took it (the comment id that one knows stands).
func releaseLink(ctx context.Context, s *Deliveries, k ddb.Key, owner string, commentID int64) error {
	upd := expression.Set(expression.Name("updated_at"), expression.Value(s.t.Stamp()))
	if commentID != 0 {
		upd = upd.Set(expression.Name("comment_id"), expression.Value(commentID))
	}
	err := lease.Unclaim(ctx, s.t, k, owner, upd)
	if errors.Is(err, lease.ErrClaimed) {
		return ErrLinkBusy
	}
	return err
}
