// Command bootstrap is the uploads Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(uploads.New(config.MustLoad(context.Background())))
}
