package testenv

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Table creates a fresh table of its own (as NewStore does) and returns
// its client and name, for tests of one store area that build the area
// on it with the area's own constructor (ddb.New(testenv.Table(t))), not
// through the store.
func Table(t testing.TB) (*dynamodb.Client, string) {
	t.Helper()
	st := NewStore(t)
	return st.Client(), st.TableName()
}
