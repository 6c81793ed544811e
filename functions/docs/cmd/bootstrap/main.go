// Command bootstrap is the docs Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/docs"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(docs.New(config.MustLoad(context.Background())))
}
