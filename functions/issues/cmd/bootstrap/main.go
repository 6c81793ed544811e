// Command bootstrap is the issues Lambda function.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	// The report bucket links finished exports (presigned, offline).
	bucket, err := s3reports.FromEnv(ctx)
	if err == nil {
		d.ExportLinkTTL, err = config.ExportLinkTTL()
	}
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	d.Exports = bucket
	lambdahttp.Start(issues.New(d))
}
