// Command bootstrap is the notifications Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(notifications.New(config.MustLoad(context.Background())))
}
