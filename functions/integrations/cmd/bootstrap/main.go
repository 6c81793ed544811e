// Command bootstrap is the integrations Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	o := config.Must(integrations.OptionsFromEnv(ctx))
	lambdahttp.Start(integrations.NewWithOptions(d, o))
}
