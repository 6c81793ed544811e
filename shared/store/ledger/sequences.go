package ledger

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

type sequence struct {
	Value int64 `dynamodbav:"value"`
}

// NextID returns the next integer id of a global sequence (atomic ADD).
func (l *Ledger) NextID(ctx context.Context, seq string) (int64, error) {
	var out sequence
	upd := expression.Add(expression.Name("value"), expression.Value(1))
	if err := l.T.Upsert(ctx, schema.SequenceKey(seq), upd, &out); err != nil {
		return 0, err
	}
	return out.Value, nil
}

// LastID is the last id a global sequence handed out (0 before the first).
func (l *Ledger) LastID(ctx context.Context, seq string) (int64, error) {
	var out sequence
	err := l.T.GetItem(ctx, schema.SequenceKey(seq), &out)
	if errors.Is(err, ddb.ErrNotFound) {
		return 0, nil
	}
	return out.Value, err
}

// NextCompanyID returns the next id of a company's own sequence, so the ids
// a company sees count only its own records. Records numbered before by a
// global sequence keep their ids: a sequence starts above the company's
// highest id of the kind, read from the last item under prefix (whose sort
// key ends in the zero-padded id and which holds it as "id"). That read may
// lag a concurrent write: callers put the new record on the condition that
// its key is new and take the next id when it is not.
func (l *Ledger) NextCompanyID(ctx context.Context, companyID int64, seq, prefix string) (int64, error) {
	var out sequence
	k := schema.CompanySeqKey(companyID, seq)
	err := l.T.Update(ctx, k, expression.Add(expression.Name("value"), expression.Value(1)), nil, &out)
	if !errors.Is(err, ddb.ErrNotFound) {
		return out.Value, err
	}
	items, _, err := l.T.QueryRaw(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), nil, false, 1, nil)
	if err != nil {
		return 0, err
	}
	var last []struct {
		ID int64 `dynamodbav:"id"`
	}
	if err := attributevalue.UnmarshalListOfMaps(items, &last); err != nil {
		return 0, err
	}
	floor := int64(0)
	if len(last) > 0 {
		floor = last[0].ID
	}
	name := expression.Name("value")
	upd := expression.Set(name, expression.Plus(expression.IfNotExists(name, expression.Value(floor)), expression.Value(1)))
	err = l.T.Upsert(ctx, k, upd, &out)
	return out.Value, err
}
