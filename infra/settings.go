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
	// configuration set each stack creates, and the web application's URL
	// for links. In production the sender and identity have no default:
	// SES refuses mail from an identity the account has not verified.
	MailFrom            string // context "mailFrom"; required when stage is prod
	SESIdentity         string // context "sesIdentity"; required when stage is prod
	SESConfigurationSet string // context "sesConfigurationSet", else codescan-notifications
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
		MailFrom:            ctx("mailFrom", ""),
		SESIdentity:         ctx("sesIdentity", ""),
		SESConfigurationSet: ctx("sesConfigurationSet", "codescan-notifications"),
		AppBaseURL:          ctx("appBaseUrl", "https://app.example.com"),
	}
	if !s.Production() {
		// Other stages may leave mail unconfigured: SES keeps an
		// unverified account in its sandbox, and nothing is delivered.
		s.MailFrom = orDefault(s.MailFrom, exampleMailFrom)
		s.SESIdentity = orDefault(s.SESIdentity, exampleSESIdentity)
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
	return s.validateMail()
}

// The senders other stages get when none is given.
const (
	exampleMailFrom    = "notifications@example.com"
	exampleSESIdentity = "example.com"
)

// validateMail checks that the sender belongs to the SES identity the
// workers may use, and that production names a domain of its own: a
// reserved example domain can never be verified, so every email would be
// refused by SES.
func (s Settings) validateMail() error {
	if s.Production() && (s.MailFrom == "" || s.SESIdentity == "") {
		return fmt.Errorf("stage prod needs the notification sender: pass -c mailFrom=<address> -c sesIdentity=<verified SES domain or address> (see docs/deploying.md)")
	}
	if s.SESConfigurationSet == "" {
		return fmt.Errorf("sesConfigurationSet must not be empty")
	}
	at := strings.LastIndexByte(s.MailFrom, '@')
	if at < 1 || at == len(s.MailFrom)-1 || strings.ContainsAny(s.MailFrom, " \t<>\"") {
		return fmt.Errorf("mailFrom %q is not an email address", s.MailFrom)
	}
	identity := strings.ToLower(s.SESIdentity)
	from, domain := strings.ToLower(s.MailFrom), strings.ToLower(s.MailFrom[at+1:])
	if strings.Contains(identity, "@") && from != identity || !strings.Contains(identity, "@") && domain != identity && !strings.HasSuffix(domain, "."+identity) {
		return fmt.Errorf("mailFrom %q is not an address of the SES identity %q: SES would refuse it", s.MailFrom, s.SESIdentity)
	}
	if s.Production() && reservedDomain(domain) {
		return fmt.Errorf("stage prod: mailFrom %q is in a reserved example domain that SES can never verify; pass -c mailFrom and -c sesIdentity of a domain you own", s.MailFrom)
	}
	return nil
}

// reservedDomain reports whether domain is one of RFC 2606's names, which
// nobody can own.
func reservedDomain(domain string) bool {
	for _, d := range []string{"example.com", "example.net", "example.org", "example", "test", "invalid", "localhost"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

func orDefault(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
