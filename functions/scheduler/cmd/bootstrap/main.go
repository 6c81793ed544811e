// Command bootstrap is the scheduler Lambda function.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deliveryengine"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	engine := config.Must(deliveryengine.FromEnv(ctx, d.Store, d.Store, d.Store, d.Server.Log))
	engine.Metrics = d.Metrics
	lambda.Start(scheduler.Handler(engine, d.Store, scheduler.FeedsFromEnv()))
}
