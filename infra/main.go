// Command infra is the CDK app of codescan-api: the same stack deployed to a
// primary and an EU region, each self-contained, built from the route table
// (shared/routes), the table definition (shared/tabledef) and each group's
// needs (shared/deployspec). `cdk synth`/`cdk deploy --all` run it through
// cdk.json; `make synth` runs it directly with Node.js (no CDK CLI needed).
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	err := run()
	jsii.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

func run() error {
	app := awscdk.NewApp(nil)
	s, err := settingsFrom(app)
	if err != nil {
		return err
	}
	NewStacks(app, s)
	app.Synth(nil)
	return nil
}
