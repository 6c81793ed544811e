// Command lambdadeps checks the dependency rules of the Lambda code:
//
//   - no Lambda main (functions/*/cmd/...) links development or test code:
//     DynamoDB Local helpers, the store's table set-up and bulk loaders,
//     the local stream poller, the local mail catcher and S3-compatible
//     server, the test environment,
//     net/http/httptest or the testing package;
//   - no group imports another group: a package under functions/<group>
//     imports its own group's packages and shared ones only, so what one
//     Lambda links is its group and the shared packages. What two groups
//     share lives in shared/, which imports no group (the development
//     composition root, internal/registry, and the test environment,
//     internal/testenv, assemble groups outside both); tests are exempt,
//     as no Lambda links them;
//   - no group package (its cmd mains excepted) and no shared worker
//     (httpapi, auth, deliveryengine, sweep, notify, recount, ingest,
//     bulktriage, exportjob, prdecor, tickets, prtriage, gate, scanlife) names the
//     concrete *store.Store outside its tests and its composition: each
//     declares, per area of the store, the calls it makes, and its
//     composition (func StoreOf(st *store.Store) Store { return
//     Store{Scans: st.Scans, ...} }) hands it those areas and no others.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

const module = "github.com/acme/codescan-api/"

var forbidden = []string{
	module + "shared/dynamolocal",
	module + "internal/",
	module + "shared/demo",
	module + "shared/devjwt",
	module + "shared/maildev",
	module + "shared/s3local",
	module + "shared/localproc",
	module + "shared/store/bulkload",
	"net/http/httptest",
	"testing",
	// The SDK's whole credential chain (profiles, SSO, STS, IMDS): a
	// function takes its role's credentials from the environment
	// (awsclient.FromEnv); tools use awsclient/chain.
	module + "shared/awsclient/chain",
	"github.com/aws/aws-sdk-go-v2/config",
}

func main() {
	bad := devCode()
	bad = append(bad, crossGroup()...)
	bad = append(bad, concreteStore()...)
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, "lambdadeps:", b)
	}
	if len(bad) > 0 {
		os.Exit(1)
	}
	fmt.Println("lambdadeps: no development or test package in the Lambda mains, no group imports another, no group or worker holds the concrete store")
}

func goList(args ...string) string {
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdadeps: go list:", err)
		os.Exit(1)
	}
	return string(out)
}

func devCode() []string {
	var bad []string
	for _, pkg := range strings.Fields(goList("-deps", "./functions/.../cmd/...")) {
		for _, f := range forbidden {
			if pkg == f || strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f) {
				bad = append(bad, "a Lambda main links "+pkg)
			}
		}
	}
	return bad
}

// crossGroup lists the imports of one group's package into another group.
func crossGroup() []string {
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(goList("-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./functions/...", "./shared/...")), "\n") {
		pkgs := strings.Fields(line)
		from := group(pkgs[0])
		for _, imp := range pkgs[1:] {
			switch to := group(imp); {
			case to == "" || to == from:
			case from == "":
				bad = append(bad, fmt.Sprintf("shared package %s imports group %s (%s); shared code imports no group", pkgs[0], to, imp))
			default:
				bad = append(bad, fmt.Sprintf("group %s imports group %s (%s -> %s); move what they share to shared/", from, to, pkgs[0], imp))
			}
		}
	}
	return bad
}

// group is the group a package belongs to ("" outside functions/).
func group(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"functions/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
}
