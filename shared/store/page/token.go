package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrBadToken is a page token the list did not issue: garbage, an edited
// token, another list's, another view's or another company's.
var ErrBadToken = errors.New("invalid page token")

// Cursor is what a token carries: the key of the last item read and the
// position after it.
type Cursor struct {
	Key    map[string]string `json:"k"`
	Offset int               `json:"o"`
}

// Start is where a read continues after the cursor.
func (c Cursor) Start() Start {
	key := Item{}
	for k, v := range c.Key {
		key[k] = &types.AttributeValueMemberS{Value: v}
	}
	return Start{key: key, client: true}
}

// Every token is base64url(JSON of a Cursor) "." base64url(checksum), the
// checksum binding the cursor to the list (its index, partition, range,
// Offset partition and view). It makes every edit detectable; it is no
// secret, so what keeps a token inside its list and company is Open's
// check of the key against the list, and DynamoDB's of the start key.

// maxTokenLength bounds what is decoded (keys are at most 2 KB + 1 KB).
const maxTokenLength = 8192

// id names the list inside a token's checksum.
func (l List) id() string {
	parts := []string{l.Index.Name, l.Partition, l.Range.From, l.Range.To, l.OffsetPartition}
	if l.View != "" {
		parts = append(parts, l.View)
	}
	return strings.Join(parts, "\x00")
}

func (l List) sum(b []byte) []byte {
	h := sha256.New()
	h.Write([]byte(l.id()))
	h.Write([]byte{0})
	h.Write(b)
	return h.Sum(nil)[:12]
}

// Seal returns the token of c for l.
func (l List) Seal(c Cursor) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(l.sum(b)), nil
}

// TokenAfter is the token of the page after item (an item of l's query),
// which is at position offset-1.
func (l List) TokenAfter(item Item, offset int) (string, error) {
	key := map[string]string{}
	for _, a := range l.keyAttrs() {
		v, ok := item[a].(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("item without string key attribute %s", a)
		}
		key[a] = v.Value
	}
	return l.Seal(Cursor{Key: key, Offset: offset})
}

// Open reverses Seal and checks that the cursor is one of l's: exactly
// the key attributes of l's query, l's partition, a sort key inside l's
// range, a position after the first item.
func (l List) Open(token string) (Cursor, error) {
	data, sum, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxTokenLength {
		return Cursor{}, ErrBadToken
	}
	b, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return Cursor{}, ErrBadToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || !bytes.Equal(got, l.sum(b)) {
		return Cursor{}, ErrBadToken
	}
	var c Cursor
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() || c.Offset < 1 {
		return Cursor{}, ErrBadToken
	}
	if !slices.Equal(slices.Sorted(maps.Keys(c.Key)), l.keyAttrs()) ||
		c.Key[l.pkAttr()] != l.Partition || !l.Range.holds(c.Key[l.skAttr()]) {
		return Cursor{}, ErrBadToken
	}
	return c, nil
}
