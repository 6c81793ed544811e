// Command bootstrap is the uploads Lambda function.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	bucket, err := s3reports.FromEnv(ctx)
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	d.Reports = bucket
	lambdahttp.Start(uploads.New(d))
}
