// Command withddb starts one in-memory DynamoDB Local, one local mail
// catcher (maildev) and one local S3-compatible server (versitygw, with
// the report bucket), runs the given command with DYNAMODB_ENDPOINT,
// MAILDEV_SMTP, MAILDEV_WEB, S3_ENDPOINT and REPORTS_BUCKET pointing at
// them, stops them, and exits with the command's status. `make test` and
// `make bench` use it so every test package shares one of each. Killed,
// it takes them with it (shared/localproc).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/s3local"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: withddb command [args...]")
		os.Exit(2)
	}
	root, err := dynamolocal.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, "withddb:", err)
		os.Exit(1)
	}
	ddb, err := dynamolocal.Start(context.Background(), root, dynamolocal.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "withddb:", err)
		os.Exit(1)
	}
	mail, err := maildev.Start(context.Background(), root, maildev.Options{})
	if err != nil {
		ddb.Stop()
		fmt.Fprintln(os.Stderr, "withddb:", err)
		os.Exit(1)
	}
	s3, err := s3local.Start(context.Background(), root, s3local.Options{})
	if err != nil {
		mail.Stop()
		ddb.Stop()
		fmt.Fprintln(os.Stderr, "withddb:", err)
		os.Exit(1)
	}
	signal.Ignore(os.Interrupt, syscall.SIGTERM) // the child gets them; we clean up after it
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+ddb.Endpoint,
		maildev.EnvSMTP+"="+mail.SMTPAddr, maildev.EnvWeb+"="+mail.WebURL,
		reportstore.EnvEndpoint+"="+s3.Endpoint, reportstore.EnvBucket+"="+s3local.Bucket)
	err = cmd.Run()
	s3.Stop()
	mail.Stop()
	ddb.Stop()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "withddb:", err)
		os.Exit(1)
	}
}
