package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// Settings configure both stacks. Each comes from CDK context (-c name=value)
// or, where noted, from the environment the CDK CLI sets.
type Settings struct {
	Account       string // context "account", else CDK_DEFAULT_ACCOUNT
	PrimaryRegion string // context "primaryRegion", else CDK_DEFAULT_REGION, else us-east-1
	EURegion      string // context "euRegion", else eu-central-1; must be an EU region
	Stage         string // context "stage", else prod; prod is production
	JWTIssuer     string // context "jwtIssuer"
	JWTAudience   string // context "jwtAudience"
	JWKSURL       string // context "jwksUrl"; empty turns bearer tokens off
	ThrottleRate  float64
	ThrottleBurst float64
	BuildDir      string // context "buildDir", else ../build (make build's output)
	// Notification email: sender address, the verified SES identity the
	// workers may send from (their only SES permission), the SES
	// configuration set, and the web application's URL for links.
	MailFrom            string // context "mailFrom"
	SESIdentity         string // context "sesIdentity"
	SESConfigurationSet string // context "sesConfigurationSet"
	AppBaseURL          string // context "appBaseUrl"
	// AuditRetentionDays is how long audit log entries live before the
	// table's TTL removes them (context "auditRetentionDays", else 400).
	AuditRetentionDays int
}

// Production reports whether the stage keeps data on stack deletion.
func (s Settings) Production() bool { return s.Stage == "prod" }

// settingsFrom reads Settings from app's context and the environment.
func settingsFrom(app awscdk.App) (Settings, error) {
	ctx := func(name, fallback string) string {
		if v, ok := app.Node().TryGetContext(&name).(string); ok && v != "" {
			return v
		}
		return fallback
	}
	s := Settings{
		Account:             ctx("account", os.Getenv("CDK_DEFAULT_ACCOUNT")),
		PrimaryRegion:       ctx("primaryRegion", envOr("CDK_DEFAULT_REGION", "us-east-1")),
		EURegion:            ctx("euRegion", "eu-central-1"),
		Stage:               ctx("stage", "prod"),
		JWTIssuer:           ctx("jwtIssuer", ""),
		JWTAudience:         ctx("jwtAudience", ""),
		JWKSURL:             ctx("jwksUrl", ""),
		BuildDir:            ctx("buildDir", "../build"),
		MailFrom:            ctx("mailFrom", "notifications@example.com"),
		SESIdentity:         ctx("sesIdentity", "example.com"),
		SESConfigurationSet: ctx("sesConfigurationSet", "codescan-notifications"),
		AppBaseURL:          ctx("appBaseUrl", "https://app.example.com"),
	}
	var err error
	if s.ThrottleRate, err = strconv.ParseFloat(ctx("throttleRate", "100"), 64); err != nil {
		return s, fmt.Errorf("context throttleRate: %w", err)
	}
	if s.ThrottleBurst, err = strconv.ParseFloat(ctx("throttleBurst", "200"), 64); err != nil {
		return s, fmt.Errorf("context throttleBurst: %w", err)
	}
	if s.AuditRetentionDays, err = strconv.Atoi(ctx("auditRetentionDays", "400")); err != nil {
		return s, fmt.Errorf("context auditRetentionDays: %w", err)
	}
	return s, s.validate()
}

func (s Settings) validate() error {
	switch {
	case s.Account == "":
		return fmt.Errorf("no AWS account: pass -c account=<id> or run through the CDK CLI with credentials")
	case !strings.HasPrefix(s.EURegion, "eu-"):
		return fmt.Errorf("euRegion %q is not an EU region: EU data must stay in the EU", s.EURegion)
	case s.EURegion == s.PrimaryRegion:
		return fmt.Errorf("primary and EU stacks need different regions (both %s)", s.EURegion)
	case s.Stage == "" || strings.Trim(s.Stage, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "":
		return fmt.Errorf("stage %q: use letters, digits and _ only (it is the API Gateway stage name)", s.Stage)
	case s.ThrottleRate <= 0 || s.ThrottleBurst <= 0:
		return fmt.Errorf("throttleRate and throttleBurst must be positive")
	case s.AuditRetentionDays < 1:
		return fmt.Errorf("auditRetentionDays must be at least 1")
	}
	return nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
