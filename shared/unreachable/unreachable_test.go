package unreachable

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/shared/localproc"
	"github.com/acme/codescan-api/shared/store/ddb"
)

func client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		APIOptions:  []func(*middleware.Stack) error{Mark},
	})
}

func get(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}})
	return err
}

// A call to a port nothing listens on (refused), and to a server that
// closes every connection without answering (EOF or reset), is
// store.ErrUnavailable.
func TestUnreachableIsUnavailable(t *testing.T) {
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://127.0.0.1:" + strconv.Itoa(port)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*net.TCPConn).SetLinger(0) // reset, not a clean close
			c.Close()
		}
	}()
	for name, endpoint := range map[string]string{"refused": refused, "reset": "http://" + l.Addr().String()} {
		err := get(context.Background(), client(endpoint))
		if !errors.Is(err, ddb.ErrUnavailable) || !ddb.Transient(err) {
			t.Errorf("%s: %v is not store.ErrUnavailable", name, err)
		}
	}
}

// An answer of the service, even an error, and the caller's own
// cancellation are not marked.
func TestAnswersAndCancellationNotMarked(t *testing.T) {
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := get(ctx, client("http://127.0.0.1:"+strconv.Itoa(port))); err == nil || errors.Is(err, ddb.ErrUnavailable) {
		t.Errorf("cancelled call: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`))
	}))
	defer srv.Close()
	err = get(context.Background(), client(srv.URL))
	var missing *types.ResourceNotFoundException
	if !errors.As(err, &missing) || errors.Is(err, ddb.ErrUnavailable) {
		t.Errorf("an error answer: %v", err)
	}
}
