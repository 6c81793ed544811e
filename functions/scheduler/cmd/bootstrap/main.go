// Command bootstrap is the scheduler Lambda function.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/tickets"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	engine := config.Must(deliveryengine.FromEnv(ctx, deliveryengine.StoreOf(d.Store), prdecor.StoreOf(d.Store), tickets.StoreOf(d.Store), d.Store.Tickets, d.Server.Log))
	engine.Metrics = d.Metrics
	lambda.Start(scheduler.Handler(engine, scheduler.StoreOf(d.Store), scheduler.FeedsFromEnv()))
}
