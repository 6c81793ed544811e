// Command vulncheck runs govulncheck on the module against the Go
// vulnerability database, with no network but the Go module proxy: the
// database's OSV entries ship in the module golang.org/x/vulndb (data/osv),
// which this command downloads at a pinned version, checks against its
// pinned hash, and indexes once into govulncheck's file database layout
// under .local/vulndb/<version>. It fails when the code reaches a known
// vulnerability (govulncheck's exit status 3), and past a time limit.
//
//	go run ./scripts/vulncheck [packages]   # default ./...
//
// To take newer vulnerability data: set vulndbVersion to a newer
// pseudo-version of golang.org/x/vulndb and vulndbSum to the "Sum" that
// `go mod download -json golang.org/x/vulndb@VERSION` prints.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/acme/codescan-api/shared/reporoot"
)

// Pinned: the vulnerability data (module version and its go.sum hash) and
// the scanner.
const (
	vulndbModule  = "golang.org/x/vulndb"
	vulndbVersion = "v0.0.0-20261105234957-e22db6528018"
	vulndbSum     = "h1:mfngRv0Yoh0VApsXKEN82CjD99kl7mtparN3bs3JnqI="
	govulncheck   = "golang.org/x/vuln/cmd/govulncheck"
	vulnVersion   = "v1.9.0"
)

// limit bounds the whole run (download, index, build and scan); a scan of
// this module takes about 30 s.
const limit = 10 * time.Minute

func main() {
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	code, err := run(ctx, patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck:", err)
	}
	os.Exit(code)
}

func run(ctx context.Context, patterns []string) (int, error) {
	root, err := reporoot.Find()
	if err != nil {
		return 1, err
	}
	db := filepath.Join(root, ".local", "vulndb", vulndbVersion)
	if _, err := os.Stat(filepath.Join(db, "index", "modules.json")); err != nil {
		mod, err := download(ctx)
		if err != nil {
			return 1, err
		}
		if err := writeDB(filepath.Join(mod.Dir, "data", "osv"), db, mod.Time); err != nil {
			return 1, err
		}
	}
	code, err := scan(ctx, filepath.Join(root, ".local", "govulncheck", vulnVersion), db, root, patterns)
	switch {
	case ctx.Err() != nil:
		return 1, fmt.Errorf("no answer within %v", limit)
	case code == 3:
		return 3, errors.New("the code reaches a known vulnerability (see above)")
	}
	return code, err
}

// scan runs govulncheck on patterns of the module in dir against the file
// database db and returns its exit status. It installs govulncheck into bin
// first (go run would hide the status, answering 1 for any failure).
func scan(ctx context.Context, bin, db, dir string, patterns []string) (int, error) {
	install := exec.CommandContext(ctx, "go", "install", govulncheck+"@"+vulnVersion)
	install.Env = append(os.Environ(), "GOBIN="+bin)
	install.Stdout, install.Stderr = os.Stderr, os.Stderr
	if err := install.Run(); err != nil {
		return 1, fmt.Errorf("go install %s@%s: %w", govulncheck, vulnVersion, err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "govulncheck"), append([]string{"-db", "file://" + db}, patterns...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// module is what `go mod download -json` tells of one module, and the
// time of its version (from its .info file).
type module struct {
	Dir, Sum, Info, Error string
	Time                  time.Time
}

// download fetches the pinned vulnerability data through the module proxy
// (or finds it in the module cache) and checks its hash.
func download(ctx context.Context) (module, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", vulndbModule+"@"+vulndbVersion)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m module
	if jerr := json.Unmarshal(out, &m); jerr != nil || err != nil || m.Error != "" {
		return module{}, fmt.Errorf("go mod download %s@%s: %v %s %s", vulndbModule, vulndbVersion, err, m.Error, stderr.String())
	}
	if m.Sum != vulndbSum {
		return module{}, fmt.Errorf("%s@%s has hash %s, pinned %s", vulndbModule, vulndbVersion, m.Sum, vulndbSum)
	}
	info, err := os.ReadFile(m.Info)
	if err != nil {
		return module{}, err
	}
	if err := json.Unmarshal(info, &m); err != nil {
		return module{}, fmt.Errorf("%s: %w", m.Info, err)
	}
	return m, nil
}
