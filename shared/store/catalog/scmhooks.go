package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// IntegrationWebhookRecord is what an integration's sealed webhook secret
// is bound to: its own record, so neither the token nor the secret opens
// in the other's place.
func IntegrationWebhookRecord(companyID int64, id string) string {
	return IntegrationTokenRecord(companyID, id) + "/webhook"
}

// ErrHookTaken refuses a webhook secret for an integration whose uuid
// another company's integration already receives deliveries under.
var ErrHookTaken = fmt.Errorf("%w: the integration uuid's webhook belongs to another company", ddb.ErrConflict)

// ErrSeen says a delivery or comment was already acted on.
var ErrSeen = fmt.Errorf("%w: delivery already acted on", ddb.ErrConflict)

// setWebhookSecret adds a new sealed webhook secret to an integration's
// update. The audit entry says it changed, never what it is.
func setWebhookSecret(upd expression.UpdateBuilder, ch IntegrationChange, out *schema.Integration, changes map[string]ledger.Change) expression.UpdateBuilder {
	if ch.SealedWebhookSecret == nil {
		return upd
	}
	var before any
	if out.SealedWebhookSecret != "" {
		before = ledger.Secret
	}
	changes["webhook_secret"] = ledger.Change{Before: before, After: ledger.Secret}
	out.SealedWebhookSecret = *ch.SealedWebhookSecret
	return upd.Set(expression.Name("sealed_webhook_secret"), expression.Value(*ch.SealedWebhookSecret))
}

// txHookRef is the put of an integration's global webhook look-up, unless
// another company holds the uuid.
func (s *Catalog) txHookRef(companyID int64, id string) (types.TransactWriteItem, error) {
	ref := schema.SCMHookRef{Key: schema.SCMHookKey(id), CompanyID: companyID, IntegrationUUID: id}
	free := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(
		expression.Name("company_id").Equal(expression.Value(companyID)))
	return s.t.TxPut(ref, &free)
}

// IntegrationByHook finds the integration an inbound delivery names by
// uuid alone, through its global look-up: ErrNotFound when no webhook
// secret was ever set for the uuid, or the look-up and the integration
// disagree (the integration is gone).
func (s *Catalog) IntegrationByHook(ctx context.Context, id string) (schema.Integration, error) {
	var ref schema.SCMHookRef
	if err := s.t.GetItem(ctx, schema.SCMHookKey(id), &ref); err != nil {
		return schema.Integration{}, err
	}
	return s.GetIntegration(ctx, ref.CompanyID, ref.IntegrationUUID)
}

// SCMCommand names one command an inbound delivery carries: the id of the
// comment that holds it. The comment id alone is the command's identity: a
// replayed delivery carries the same comment, and so does the same signed
// body sent again under a new delivery id (the signature covers the body,
// not the headers).
type SCMCommand struct {
	CompanyID   int64
	Integration string // uuid
	CommentID   int64
}

func (c SCMCommand) key() ddb.Key {
	return schema.SCMCommentKey(c.CompanyID, c.Integration, c.CommentID)
}

// SCMClaimLease is how long a claim holds a command being carried out: a
// claim still "claimed" after it (its request died, or could not give the
// claim back) is taken by the next redelivery. A command runs in seconds.
const SCMClaimLease = time.Minute

// ClaimSCMCommand remembers, for ttl from now, that a comment's command is
// being acted on: ErrSeen when it was claimed before, unless that claim
// failed or its lease ran out unfinished.
func (s *Catalog) ClaimSCMCommand(ctx context.Context, c SCMCommand, now time.Time, ttl time.Duration) error {
	state := expression.Name("state")
	free := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(
		state.Equal(expression.Value(schema.SCMFailed)),
		state.Equal(expression.Value(schema.SCMClaimed)).And(
			expression.Name("claimed_at").LessThan(expression.Value(ddb.SortableTime(now.Add(-SCMClaimLease))))))
	err := s.t.PutItem(ctx, schema.SCMClaim{Key: c.key(), State: schema.SCMClaimed, ClaimedAt: ddb.SortableTime(now), ExpiresAt: now.Add(ttl).Unix()}, &free)
	if errors.Is(err, ddb.ErrConflict) {
		return ErrSeen
	}
	return err
}

// CompleteSCMCommand marks a claimed command carried out: no redelivery
// takes it again.
func (s *Catalog) CompleteSCMCommand(ctx context.Context, c SCMCommand) error {
	return s.setClaim(ctx, c, schema.SCMDone)
}

// FailSCMCommand marks a claim whose command could not be carried out, so
// the host's redelivery of it claims it again.
func (s *Catalog) FailSCMCommand(ctx context.Context, c SCMCommand) error {
	return s.setClaim(ctx, c, schema.SCMFailed)
}

func (s *Catalog) setClaim(ctx context.Context, c SCMCommand, state string) error {
	// Only a claim that exists (ErrNotFound otherwise): it keeps its expiry.
	return s.t.Update(ctx, c.key(), expression.Set(expression.Name("state"), expression.Value(state)), nil, nil)
}

// MaxPRProjects bounds the projects whose summaries one pull request shows
// that a command looks at.
const MaxPRProjects = 50

// PRProjects returns the projects whose summary comment the integration
// keeps on a pull request (repo owner/name, number as the scans record
// them), read from the comments' link items: at most MaxPRProjects.
func (s *Catalog) PRProjects(ctx context.Context, companyID int64, integration, repo, number string) ([]int64, error) {
	prefix := schema.PRLinkPrefix(integration, repo, number)
	items, _, err := s.t.QueryRaw(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), nil, true, MaxPRProjects, nil)
	if err != nil {
		return nil, err
	}
	var keys []ddb.Key
	if err := attributevalue.UnmarshalListOfMaps(items, &keys); err != nil {
		return nil, err
	}
	var out []int64
	for _, k := range keys {
		id, err := strconv.ParseInt(strings.TrimPrefix(k.SK, prefix), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("pull request link %q: %w", k.SK, err)
		}
		out = append(out, id)
	}
	return out, nil
}
