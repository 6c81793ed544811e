// Package s3local builds and runs a local S3-compatible server for the dev
// server and the tests, with the report bucket created at start: uploads
// are really stored over the S3 API and read back by the ingester, and
// exports are downloaded through presigned links.
//
// The server is the Versity S3 Gateway (versitygw, Apache-2.0), pinned in
// shared/localproc/gotools and built from it on first use. It checks
// requests as S3 does: SigV4 in the Authorization header and in presigned
// query strings (the signature over method, key, query and signed headers,
// X-Amz-Date plus X-Amz-Expires not passed), and it refuses anonymous
// requests, as the bucket has no policy or ACL that opens it. So a
// presigned link's binding to its object and its expiry hold locally as
// in AWS. Development only: no Lambda links it.
package s3local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/acme/codescan-api/shared/localproc"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

// Bucket is the report bucket's name locally.
const Bucket = "codescan-reports"

// gateway is the server's package in the pinned tool module.
const gateway = "github.com/versity/versitygw/cmd/versitygw"

// Options of a server.
type Options struct {
	Port int    // 0 picks a free one
	Dir  string // data directory; empty: a temporary one removed at Stop
}

// Process is a running server.
type Process struct {
	Endpoint string // http://127.0.0.1:port
	*localproc.Process
}

// Start runs the gateway on 127.0.0.1 with the report bucket, building it
// under root/.local on first use, and waits until it answers a signed
// request for the bucket (creating it if missing). Started again
// (Supervise), it keeps its port and directory.
func Start(ctx context.Context, root string, o Options) (*Process, error) {
	bin, err := localproc.GoTool(root, gateway)
	if err != nil {
		return nil, err
	}
	if o.Port == 0 {
		if o.Port, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	cleanup, err := dataDir(&o)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port))
	p := &Process{Endpoint: "http://" + addr}
	bucket, err := s3reports.New(ctx, Bucket, p.Endpoint)
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		return nil, err
	}
	p.Process, err = localproc.Start(ctx, "the S3 server (versitygw) on "+p.Endpoint, func() *exec.Cmd { return command(bin, addr, o.Dir) },
		30*time.Second, func(ctx context.Context) bool { return listening(addr) && ensureBucket(ctx, bucket.Client) == nil }, cleanup)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// dataDir makes o.Dir, a temporary one when empty, and returns what
// removes a temporary one (nil for a given one).
func dataDir(o *Options) (func(), error) {
	if o.Dir != "" {
		return nil, os.MkdirAll(o.Dir, 0o755)
	}
	dir, err := os.MkdirTemp("", "s3local-")
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	return func() { _ = os.RemoveAll(dir) }, nil
}

// command is the gateway on addr over the directory dir: objects are
// files under dir/buckets (one directory a bucket), their metadata in
// dir/meta ("sidecar" files: no extended attributes needed of the file
// system, which tmpfs and overlayfs may lack). The one account is the
// fixed local credentials the report store signs with. The directories
// are made here, not at Start, so a data directory that is gone or
// replaced makes the start fail rather than come up empty.
func command(bin, addr, dir string) *exec.Cmd {
	objects, meta := filepath.Join(dir, "buckets"), filepath.Join(dir, "meta")
	for _, d := range []string{objects, meta} {
		_ = os.Mkdir(d, 0o755) // a failure shows as the gateway's own
	}
	return exec.Command(bin, "--port", addr, "--region", "us-east-1",
		"--access", s3reports.LocalAccessKey, "--secret", s3reports.LocalSecretKey, "--quiet",
		"posix", "--sidecar", meta, objects)
}

// listening reports whether something accepts connections on addr: a
// cheap test before the SDK's calls, which retry a refused connection.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	return c.Close() == nil
}

// ensureBucket creates the report bucket unless it is there.
func ensureBucket(ctx context.Context, client *s3.Client) error {
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(Bucket)})
	var missing *types.NotFound
	if !errors.As(err, &missing) {
		return err
	}
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		return fmt.Errorf("create bucket %s: %w", Bucket, err)
	}
	return nil
}
