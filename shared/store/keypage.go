package store

// Pages of one partition read with a plain key token (the lists built
// before the List/PageQuery helper of pagetoken.go: API keys, users, the
// audit log, companies, webhooks and their deliveries, scans, projects,
// policies and blocking rules).

import (
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// encodeKeyToken turns a LastEvaluatedKey (all key attributes are strings) into
// an opaque token. AttributeValues do not round-trip through encoding/json,
// so the token carries plain strings.
func encodeKeyToken(last map[string]types.AttributeValue) (string, error) {
	if last == nil {
		return "", nil
	}
	plain := map[string]string{}
	for k, v := range last {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", errors.New("non-string key attribute " + k)
		}
		plain[k] = s.Value
	}
	b, err := json.Marshal(plain)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeKeyToken reverses encodeToken and checks that the token belongs to the
// partition being queried, so a token can never move a query to another
// company's partition.
func decodeKeyToken(token, pkAttr, partition string) (map[string]types.AttributeValue, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, ErrBadPageToken
	}
	plain := map[string]string{}
	if err := json.Unmarshal(b, &plain); err != nil || plain[pkAttr] != partition {
		return nil, ErrBadPageToken
	}
	out := map[string]types.AttributeValue{}
	for k, v := range plain {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return out, nil
}

// badStart is the error of a query whose start key came from a page token:
// DynamoDB refusing the start key (attributes missing or extra, a key
// outside the query's range: an edited token, or another list's) is
// ErrBadPageToken, the client's error, not the service's.
func badStart(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" {
		return ErrBadPageToken
	}
	return err
}

// Page is one bounded read of a partition.
type Page struct {
	Index     string // "" for the table
	PKAttr    string // partition key attribute of the table or index
	Partition string // partition key value
	SKPrefix  string // optional sort key prefix
	Forward   bool
	Limit     int32
	Token     string
}
