// Command bootstrap is the components Lambda function: the component
// inventory's route.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/components"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(components.New(config.MustLoad(context.Background())))
}
