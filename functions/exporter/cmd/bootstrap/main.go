// Command bootstrap is the exporter Lambda function: the handler of the
// table stream's event source mapping for new export items.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/exporter"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	bucket, err := s3reports.FromEnv(ctx)
	if err != nil {
		d.Server.Log.Error("configuration", "error", err.Error())
		return
	}
	x := &exporter.Exporter{Store: d.Store, Bucket: bucket, Log: d.Server.Log}
	lambda.Start(x.HandleStream)
}
