// Command bootstrap is the VEX import Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/vex"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(vex.New(config.MustLoad(context.Background())))
}
