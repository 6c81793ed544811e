// Command bootstrap is the webhooks Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	o := config.Must(webhooks.OptionsFromEnv(ctx))
	lambdahttp.Start(webhooks.NewWithOptions(d, o))
}
