// Command bootstrap is the uploads Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	bucket := config.Must(s3reports.FromEnv(ctx))
	d.Reports = bucket
	lambdahttp.Start(config.Must(uploads.FromEnv(d)))
}
