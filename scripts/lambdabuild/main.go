// Command lambdabuild builds every group of the route table, and the
// workers no route reaches (deployspec.Workers), as a Lambda
// function for provided.al2023 on arm64: build/<group>/bootstrap (the
// directory SAM and CDK package) and build/<group>.zip (for deploying by
// hand), and prints each binary's size.
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/routes"
)

// maxSize is the size no bootstrap may exceed: a small binary keeps
// cold starts short and the deployment package far from Lambda's limits.
// The floor is high: a main that only lists tables with the SDK's default
// configuration (credential chain included) is 8.2 MB with Go 1.26, so
// the budget leaves each group about 4 MB of its own.
const maxSize = 12 << 20

// celSize is the budget of the functions that compile or evaluate
// destinations' CEL filters (shared/eventfilter: the webhooks and
// notifications routes check them when saved, the dispatcher and the
// scheduler evaluate them): cel-go and its protobuf runtime add some
// 11 MB, and the two workers also link the pull-request and ticket
// clients (dispatcher and scheduler 30 MB, webhooks 23 MB, notifications
// 20 MB on 2026-11-27). Still far from Lambda's 250 MB unzipped.
const celSize = 32 << 20

// budget is the size a group's bootstrap may reach.
func budget(group string) int64 {
	switch group {
	case "notifications", "webhooks", "dispatcher", "scheduler":
		return celSize
	}
	return maxSize
}

func main() {
	out := flag.String("out", "build", "output directory, relative to the repository root")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "lambdabuild:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	var tooBig []string
	groups := routes.Groups()
	for _, w := range deployspec.Workers() {
		groups = append(groups, w.Group)
	}
	for _, g := range groups {
		bin := filepath.Join(root, out, g, "bootstrap")
		if err := build(root, g, bin); err != nil {
			return err
		}
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		if err := zipBootstrap(bin, filepath.Join(root, out, g+".zip")); err != nil {
			return err
		}
		fmt.Printf("%-14s %6.2f MB  %s\n", g, float64(st.Size())/(1<<20), filepath.Join(out, g, "bootstrap"))
		if st.Size() > budget(g) {
			tooBig = append(tooBig, g)
		}
	}
	if len(tooBig) > 0 {
		return fmt.Errorf("over the size budget (%d MB; %d MB with CEL filters): %v", maxSize>>20, celSize>>20, tooBig)
	}
	return nil
}

// build compiles the group's Lambda main the way the runtime expects it.
func build(root, group, bin string) error {
	pkg := "./functions/" + group + "/cmd/bootstrap"
	if _, err := os.Stat(filepath.Join(root, pkg, "main.go")); err != nil {
		return fmt.Errorf("group %s has no Lambda main at %s", group, pkg)
	}
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", group, err)
	}
	return nil
}

// zipBootstrap writes the deployment package: one executable file named
// bootstrap, with a fixed timestamp so equal binaries give equal zips.
func zipBootstrap(bin, dst string) error {
	src, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	hdr := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err == nil {
		_, err = io.Copy(w, src)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
