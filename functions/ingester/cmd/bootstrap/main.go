// Command bootstrap is the ingester Lambda function: the handler of the
// table stream's event source mapping for new scans of uploaded reports,
// new bulk triage operations and new exports.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	bucket := config.Must(s3reports.FromEnv(ctx))
	in := &ingester.Ingester{Store: ingester.StoreOf(d.Store), Reports: bucket, Log: d.Server.Log, Metrics: d.Metrics,
		Exporter: &exportjob.Worker{Store: exportjob.StoreOf(d.Store), Bucket: bucket, Log: d.Server.Log}}
	lambda.Start(in.HandleStream)
}
