// Command bootstrap is the dispatcher Lambda function: the handler of the
// table stream's event source mapping.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/acme/codescan-api/functions/dispatcher"
	"github.com/acme/codescan-api/shared/config"
)

func main() {
	ctx := context.Background()
	d := config.MustLoad(ctx)
	disp, err := dispatcher.FromEnv(ctx, d.Store, d.Server.Log)
	if err != nil {
		d.Server.Log.Error("configuration", "error", err.Error())
		return
	}
	lambda.Start(disp.HandleStream)
}
