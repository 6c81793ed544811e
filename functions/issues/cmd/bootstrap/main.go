// Command bootstrap is the issues Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	// The report bucket links finished exports (presigned, offline).
	bucket := config.Must(s3reports.FromEnv(ctx))
	d.ExportLinkTTL = config.Must(config.ExportLinkTTL())
	d.Exports = bucket
	lambdahttp.Start(issues.New(d))
}
