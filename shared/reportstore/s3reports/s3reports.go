// Package s3reports is the report bucket on Amazon S3 (or, locally, on an
// S3-compatible server addressed path-style).
package s3reports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/unreachable"
)

// Local credentials: the S3-compatible server run locally (shared/s3local)
// has this one account, and checks every request's signature against it;
// nothing in AWS uses them.
const (
	LocalAccessKey = "codescan-local"
	LocalSecretKey = "codescan-local-secret"
)

// Store is a bucket of reports.
type Store struct {
	Client *s3.Client
	Bucket string
}

var _ reportstore.Store = (*Store)(nil)

// New returns the bucket on S3, or on the S3-compatible server at endpoint
// (path-style, fixed local credentials) when endpoint is set. It builds the
// client only; nothing here touches the network.
func New(ctx context.Context, bucket, endpoint string) (*Store, error) {
	if bucket == "" {
		return nil, fmt.Errorf("no report bucket configured (%s)", reportstore.EnvBucket)
	}
	cfg := awsclient.Static("us-east-1", LocalAccessKey, LocalSecretKey, "")
	if endpoint == "" {
		var err error
		if cfg, err = awsclient.FromEnv(); err != nil {
			return nil, err
		}
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Checksums only where S3 requires them: the local server does not
		// read the SDK's trailing-checksum encoding.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		// A bucket that cannot be reached is a 503, not a 500.
		o.APIOptions = append(o.APIOptions, unreachable.Mark)
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
	return &Store{Client: client, Bucket: bucket}, nil
}

// FromEnv is New with REPORTS_BUCKET and S3_ENDPOINT.
func FromEnv(ctx context.Context) (*Store, error) {
	return New(ctx, os.Getenv(reportstore.EnvBucket), os.Getenv(reportstore.EnvEndpoint))
}

// Put stores body under key.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	_, err := s.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String("application/octet-stream"),
	})
	if err != nil {
		return fmt.Errorf("put report object: %w", err)
	}
	return nil
}

// Get reads the object at key, at most limit bytes.
func (s *Store) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	out, err := s.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, reportstore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get report object: %w", err)
	}
	defer out.Body.Close()
	if n := aws.ToInt64(out.ContentLength); n > limit {
		return nil, reportstore.ErrTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read report object: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, reportstore.ErrTooLarge
	}
	return b, nil
}

// List returns the objects under prefix in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]reportstore.Object, error) {
	var out []reportstore.Object
	p := s3.NewListObjectsV2Paginator(s.Client, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list report objects: %w", err)
		}
		for _, o := range page.Contents {
			out = append(out, reportstore.Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}
