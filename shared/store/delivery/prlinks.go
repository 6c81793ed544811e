package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
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
type PRLink struct {
	ddb.Key
	CommentID  int64  `dynamodbav:"comment_id,omitempty"`
	LeaseOwner string `dynamodbav:"lease_owner,omitempty"`
	LeaseUntil string `dynamodbav:"lease_until,omitempty"`
	UpdatedAt  string `dynamodbav:"updated_at,omitempty"`
}

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

// ErrLinkBusy is returned when another decoration holds the link's lease.
var ErrLinkBusy = errors.New("another decoration of this pull request is in progress")

// ClaimPRLink takes the lease of a pull request's link for owner until
// now+lease (creating the link), and returns the link; ErrLinkBusy while
// another owner's lease runs.
func (s *Deliveries) ClaimPRLink(ctx context.Context, p PRTarget, owner string, now time.Time, lease time.Duration) (PRLink, error) {
	lo, lu := expression.Name("lease_owner"), expression.Name("lease_until")
	free := expression.AttributeNotExists(expression.Name("PK")).Or(expression.AttributeNotExists(lo)).
		Or(lo.Equal(expression.Value(owner))).Or(lu.LessThan(expression.Value(ddb.SortableTime(now))))
	upd := expression.Set(lo, expression.Value(owner)).Set(lu, expression.Value(ddb.SortableTime(now.Add(lease))))
	expr, err := expression.NewBuilder().WithCondition(free).WithUpdate(upd).Build()
	if err != nil {
		return PRLink{}, err
	}
	in := ddb.UpdateInput(s.t.Name, p.key(), expr, types.ReturnValueAllNew)
	res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return s.t.DB.UpdateItem(ctx, in) })
	if ddb.IsConditionFailed(err) {
		return PRLink{}, ErrLinkBusy
	}
	if err != nil {
		return PRLink{}, err
	}
	var out PRLink
	return out, attributevalue.UnmarshalMap(res.Attributes, &out)
}

// ReleasePRLink records the comment's id (0 keeps the one known) and
// gives the lease back, if owner still holds it.
func (s *Deliveries) ReleasePRLink(ctx context.Context, p PRTarget, owner string, commentID int64) error {
	upd := expression.Remove(expression.Name("lease_owner")).Remove(expression.Name("lease_until")).
		Set(expression.Name("updated_at"), expression.Value(s.t.Stamp()))
	if commentID != 0 {
		upd = upd.Set(expression.Name("comment_id"), expression.Value(commentID))
	}
	return releaseLease(ctx, s, p.key(), owner, upd)
}

// releaseLease applies upd to a link if owner still holds its lease:
// ErrLinkBusy when the lease ran out and another took it (the comment id
// that one knows stands).
func releaseLease(ctx context.Context, s *Deliveries, k ddb.Key, owner string, upd expression.UpdateBuilder) error {
	held := expression.Name("lease_owner").Equal(expression.Value(owner))
	err := s.t.Update(ctx, k, upd, &held, nil)
	if errors.Is(err, ddb.ErrConflict) || errors.Is(err, ddb.ErrNotFound) {
		return ErrLinkBusy
	}
	return err
}
