// Command bootstrap is the tickets Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/tickets"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	o := config.Must(tickets.OptionsFromEnv(ctx))
	lambdahttp.Start(tickets.NewWithOptions(d, o))
}
