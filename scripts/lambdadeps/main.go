// Command lambdadeps fails when a Lambda main (functions/*/cmd/...) links
// development or test code: DynamoDB Local helpers, the local stream
// poller, the local mail catcher and S3-compatible server, the test
// environment, net/http/httptest or the testing package.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

var forbidden = []string{
	"github.com/acme/codescan-api/shared/dynamolocal",
	"github.com/acme/codescan-api/shared/testenv",
	"github.com/acme/codescan-api/shared/demo",
	"github.com/acme/codescan-api/shared/devjwt",
	"github.com/acme/codescan-api/functions/dispatcher/localstream",
	"github.com/acme/codescan-api/shared/maildev",
	"github.com/acme/codescan-api/shared/s3local",
	"github.com/acme/codescan-api/shared/localproc",
	"net/http/httptest",
	"testing",
}

func main() {
	out, err := exec.Command("go", "list", "-deps", "./functions/.../cmd/...").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdadeps: go list:", err)
		os.Exit(1)
	}
	bad := 0
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f {
				fmt.Fprintln(os.Stderr, "lambdadeps: a Lambda main links", pkg)
				bad++
			}
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
	fmt.Println("lambdadeps: no development or test package in the Lambda mains")
}
