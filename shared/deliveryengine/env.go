package deliveryengine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	storetickets "github.com/acme/codescan-api/shared/store/tickets"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/mail"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/tickets"
	"github.com/acme/codescan-api/shared/webhook"
)

// Environment FromEnv reads.
const (
	EnvMailFrom         = "MAIL_FROM"             // sender address (the SES identity in AWS)
	EnvSESConfiguration = "SES_CONFIGURATION_SET" // SES configuration set; selects SES with MAIL_FROM
	EnvSMTPAddr         = "SMTP_ADDR"             // host:port of the local mail catcher
	EnvAppURL           = "APP_BASE_URL"          // web application, for links in emails
	EnvAllowLoopback    = "WEBHOOK_ALLOW_LOOPBACK_HTTP"
)

// FromEnv builds an Engine on st from the environment: SES when
// SES_CONFIGURATION_SET is set (in AWS), else SMTP to SMTP_ADDR (locally);
// pull requests decorated over pr through the integrations' hosts, and
// tickets kept over tk in their trackers (loopback hosts allowed only with
// scmhost.EnvAllowLoopback).
func FromEnv(ctx context.Context, st Store, pr prdecor.Store, tk tickets.Store, area *storetickets.Tickets, log *slog.Logger) (*Engine, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	from := os.Getenv(EnvMailFrom)
	if from == "" {
		from = "notifications@codescan.localhost"
	}
	var sender mail.Sender
	switch {
	case os.Getenv(EnvSESConfiguration) != "":
		cfg, err := awsclient.FromEnv()
		if err != nil {
			return nil, err
		}
		sender = &mail.SES{Client: sesv2.NewFromConfig(cfg), From: from, ConfigurationSet: os.Getenv(EnvSESConfiguration)}
	case os.Getenv(EnvSMTPAddr) != "":
		sender = &mail.SMTP{Addr: os.Getenv(EnvSMTPAddr), From: from}
	default:
		return nil, fmt.Errorf("delivery: set %s (SES) or %s (SMTP)", EnvSESConfiguration, EnvSMTPAddr)
	}
	loopback, _ := strconv.ParseBool(os.Getenv(EnvAllowLoopback))
	hostLoopback, _ := strconv.ParseBool(os.Getenv(scmhost.EnvAllowLoopback))
	return &Engine{
		Store: st, Webhooks: webhook.New(webhook.Options{AllowLoopback: loopback}), Mail: sender, Sealer: sealer,
		AppURL: os.Getenv(EnvAppURL), Backoff: DefaultBackoff, Log: log,
		Outbound: []outbound.Channel{
			&prdecor.Decorator{Store: pr, Host: scmhost.New(scmhost.Options{AllowLoopback: hostLoopback}), Sealer: sealer, AppURL: os.Getenv(EnvAppURL)},
			tickets.NewChannel(tk, area, sealer, os.Getenv(EnvAppURL), hostLoopback),
		},
	}, nil
}
