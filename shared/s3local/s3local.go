// Package s3local installs (the npm package s3rver, pinned in
// shared/localproc/npm) and runs a
// local S3-compatible server for the dev server and the tests, with the
// report bucket created at start: uploads are really stored over the S3 API
// and read back by the ingester. Development only: no Lambda links it.
package s3local

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/localproc"
)

// Bucket is the report bucket's name locally.
const Bucket = "codescan-reports"

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

// Start runs s3rver on 127.0.0.1 with the report bucket, installing the
// npm tools under root/.local on first use, and waits until it answers for
// the bucket. Started again (Supervise), it keeps its port and directory.
func Start(ctx context.Context, root string, o Options) (*Process, error) {
	bin, err := localproc.NPMFile(root, filepath.Join("s3rver", "bin", "s3rver.js"))
	if err != nil {
		return nil, err
	}
	if o.Port == 0 {
		if o.Port, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	var cleanup func()
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("", "s3rver-"); err != nil {
			return nil, err
		}
		tmp := o.Dir
		cleanup = func() { _ = os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	cmd := func() *exec.Cmd {
		return exec.Command("node", bin, "--directory", o.Dir, "--address", "127.0.0.1", "--port", strconv.Itoa(o.Port),
			"--silent", "--no-vhost-buckets", "--configure-bucket", Bucket)
	}
	p := &Process{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", o.Port)}
	p.Process, err = localproc.Start(ctx, "the S3 server (s3rver) on "+p.Endpoint, cmd, 30*time.Second, func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, p.Endpoint+"/"+Bucket, nil)
		if err != nil {
			return false
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		// Unsigned: 403 means the server runs and the bucket is there.
		return res.StatusCode == http.StatusOK || res.StatusCode == http.StatusForbidden
	}, cleanup)
	if err != nil {
		return nil, err
	}
	return p, nil
}
