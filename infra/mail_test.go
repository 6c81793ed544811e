package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// A production synth without a sender of its own fails with a message that
// says what to pass; other stages fall back to the example sender.
func TestProductionNeedsASender(t *testing.T) {
	settings := func(ctx map[string]any) (Settings, error) {
		ctx["account"] = "123456789012"
		return settingsFrom(awscdk.NewApp(&awscdk.AppProps{Context: &ctx}))
	}
	for name, c := range map[string]struct {
		ctx  map[string]any
		want string // in the error; empty: no error
	}{
		"prod without sender":     {map[string]any{"stage": "prod"}, "stage prod needs the notification sender: pass -c mailFrom="},
		"prod by default":         {map[string]any{}, "stage prod needs the notification sender"},
		"prod with identity only": {map[string]any{"stage": "prod", "sesIdentity": testSESIdentity}, "stage prod needs the notification sender"},
		"prod with example.com":   {map[string]any{"stage": "prod", "mailFrom": "notifications@example.com", "sesIdentity": "example.com"}, "reserved example domain"},
		"prod with .test":         {map[string]any{"stage": "prod", "mailFrom": "n@mail.acme.test", "sesIdentity": "acme.test"}, "reserved example domain"},
		"prod with own domain":    {map[string]any{"stage": "prod", "mailFrom": testMailFrom, "sesIdentity": testSESIdentity}, ""},
		"prod, address identity":  {map[string]any{"stage": "prod", "mailFrom": testMailFrom, "sesIdentity": testMailFrom}, ""},
		"staging without sender":  {map[string]any{"stage": "staging"}, ""},
	} {
		s, err := settings(c.ctx)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		case c.want == "" && (s.MailFrom == "" || s.SESIdentity == ""):
			t.Errorf("%s: no sender (%q, %q)", name, s.MailFrom, s.SESIdentity)
		}
	}
}

// Each stack creates the configuration set its mailers name, and publishes
// the events of undelivered mail to the alarm topic, which SES may publish
// to (and encrypt for) for that configuration set only.
func TestMailConfigurationSet(t *testing.T) {
	for _, s := range synth(t, "prod") {
		topic := s.logicalID(s.stack.AlarmTopic)
		assert(t, s.region+" configuration set", func() {
			s.template.ResourceCountIs(jsii.String("AWS::SES::ConfigurationSet"), jsii.Number(1))
			s.template.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSet"), map[string]any{
				"Name":               "codescan-notifications",
				"DeliveryOptions":    map[string]any{"TlsPolicy": "REQUIRE"},
				"ReputationOptions":  map[string]any{"ReputationMetricsEnabled": true},
				"SuppressionOptions": map[string]any{"SuppressedReasons": []any{"BOUNCE", "COMPLAINT"}},
			})
		})
		assert(t, s.region+" event destination", func() {
			s.template.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSetEventDestination"), map[string]any{
				"EventDestination": assertions.Match_ObjectLike(&map[string]any{
					"Enabled":            true,
					"MatchingEventTypes": []any{"bounce", "complaint", "reject", "renderingFailure", "deliveryDelay"},
					"SnsDestination":     map[string]any{"TopicARN": map[string]any{"Ref": topic}},
				}),
			})
		})
		ses := map[string]any{"Service": "ses.amazonaws.com"}
		thisSet := assertions.Match_ObjectLike(&map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": "123456789012"}})
		assert(t, s.region+" topic policy lets SES publish", func() {
			s.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), map[string]any{
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{"Effect": "Allow", "Principal": ses, "Action": "sns:Publish", "Condition": thisSet}),
				})},
			})
		})
		assert(t, s.region+" topic key lets SES encrypt", func() {
			s.template.HasResourceProperties(jsii.String("AWS::KMS::Key"), map[string]any{
				"KeyPolicy": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{map[string]any{
					"Effect": "Allow", "Principal": ses, "Action": []any{"kms:Decrypt", "kms:GenerateDataKey*"}, "Resource": "*", "Condition": thisSet,
				}})},
			})
		})
	}
}
