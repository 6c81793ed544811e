// Command bootstrap is the dispatcher Lambda function: the handler of the
// table stream's event source mapping.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/dispatcher"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deliveryengine"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	engine := config.Must(deliveryengine.FromEnv(ctx, d.Store, d.Store, d.Store, d.Server.Log))
	engine.Metrics = d.Metrics
	lambda.Start(dispatcher.Handler(engine))
}
