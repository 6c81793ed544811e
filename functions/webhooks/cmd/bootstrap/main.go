// Command bootstrap is the webhooks Lambda function.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	o, err := webhooks.OptionsFromEnv(ctx)
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdahttp.Start(webhooks.NewWithOptions(d, o))
}
