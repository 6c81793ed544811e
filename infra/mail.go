package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsses"
	"github.com/aws/jsii-runtime-go"
)

// mailEvents are the SES events that mean a notification did not reach its
// reader; they go to the alarm topic. Deliveries and sends are not news.
var mailEvents = []awsses.EmailSendingEvent{
	awsses.EmailSendingEvent_BOUNCE, awsses.EmailSendingEvent_COMPLAINT, awsses.EmailSendingEvent_REJECT,
	awsses.EmailSendingEvent_RENDERING_FAILURE, awsses.EmailSendingEvent_DELIVERY_DELAY,
}

// addMailConfiguration creates the SES configuration set the mailers name
// (SES refuses a send that names a configuration set which does not exist):
// TLS required, reputation metrics on, bounced and complaining addresses
// suppressed, and the events of undelivered mail published to the alarm
// topic, which SES may use for that configuration set only.
func (a *APIStack) addMailConfiguration(s Settings, topicKey awskms.IKey) {
	set := awsses.NewConfigurationSet(a.Stack, jsii.String("MailConfigurationSet"), &awsses.ConfigurationSetProps{
		ConfigurationSetName: &s.SESConfigurationSet,
		TlsPolicy:            awsses.ConfigurationSetTlsPolicy_REQUIRE,
		ReputationMetrics:    jsii.Bool(true),
		SendingEnabled:       jsii.Bool(true),
		SuppressionReasons:   awsses.SuppressionReasons_BOUNCES_AND_COMPLAINTS,
	})
	events := make([]awsses.EmailSendingEvent, len(mailEvents))
	copy(events, mailEvents)
	set.AddEventDestination(jsii.String("UndeliveredToAlarmTopic"), &awsses.ConfigurationSetEventDestinationOptions{
		Destination: awsses.EventDestination_SnsTopic(a.AlarmTopic),
		Events:      &events,
	})

	ses := &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("ses.amazonaws.com"), nil)}
	thisSet := &map[string]any{
		"StringEquals": map[string]any{"aws:SourceAccount": a.Account()},
		"ArnLike": map[string]any{"aws:SourceArn": a.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("ses"), Resource: jsii.String("configuration-set"), ResourceName: &s.SESConfigurationSet,
		})},
	}
	a.AlarmTopic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: ses, Actions: jsii.Strings("sns:Publish"), Resources: &[]*string{a.AlarmTopic.TopicArn()}, Conditions: thisSet,
	}))
	topicKey.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: ses, Actions: jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"), Resources: jsii.Strings("*"), Conditions: thisSet,
	}), nil)
}
