package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
)

// addWorkers adds notification delivery: the dispatcher on the table's
// stream (new outbox items only, partial batch failures, a failure queue),
// and the scheduler with one EventBridge rule per job; and ingestion: the
// ingester on the same stream (new scans of uploaded reports, new bulk
// triage operations and new exports only, its own failure queue). The
// two are the stream's only readers (deployspec.MaxStreamReaders).
func (a *APIStack) addWorkers(s Settings, removal awscdk.RemovalPolicy) {
	a.FailureQueue = awssqs.NewQueue(a.Stack, jsii.String("DispatcherFailureQueue"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RemovalPolicy:   removal,
	})
	a.IngestFailureQueue = awssqs.NewQueue(a.Stack, jsii.String("IngesterFailureQueue"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RemovalPolicy:   removal,
	})
	for _, f := range deployspec.Workers() {
		fn := a.worker(f, s, removal)
		a.Workers[f.Group] = fn
		switch f.Group {
		case deployspec.WorkerDispatcher:
			fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(a.Table, &awslambdaeventsources.DynamoEventSourceProps{
				StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
				BatchSize:               jsii.Number(10),
				MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(1)),
				RetryAttempts:           jsii.Number(10),
				BisectBatchOnError:      jsii.Bool(true),
				ReportBatchItemFailures: jsii.Bool(true),
				OnFailure:               awslambdaeventsources.NewSqsDlq(a.FailureQueue),
				Filters:                 streamFilters(f),
			}))
		case deployspec.WorkerIngester:
			// One scan, bulk triage operation or export per invocation
			// (each may take minutes); up to 4 at a time per shard.
			fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(a.Table, &awslambdaeventsources.DynamoEventSourceProps{
				StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
				BatchSize:               jsii.Number(1),
				ParallelizationFactor:   jsii.Number(4),
				RetryAttempts:           jsii.Number(5),
				BisectBatchOnError:      jsii.Bool(true),
				ReportBatchItemFailures: jsii.Bool(true),
				OnFailure:               awslambdaeventsources.NewSqsDlq(a.IngestFailureQueue),
				Filters:                 streamFilters(f),
			}))
		case deployspec.WorkerScheduler:
			for _, sch := range deployspec.Schedules {
				rule := awsevents.NewRule(a.Stack, jsii.String("Schedule"+sch.Name), &awsevents.RuleProps{
					Schedule:    awsevents.Schedule_Expression(jsii.String(sch.Expression)),
					Description: jsii.String("codescan-api scheduled job " + sch.Name),
				})
				rule.AddTarget(awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
					Event: awsevents.RuleTargetInput_FromObject(map[string]string{"job": sch.Name}),
				}))
			}
		}
	}
}

// worker is one non-route function with exactly its grants: its table
// actions; for the mailers kms:Decrypt on the secrets key and
// ses:SendEmail on the sender identity and configuration set only; for the
// ingester reading reports.
func (a *APIStack) worker(f deployspec.Function, s Settings, removal awscdk.RemovalPolicy) awslambda.Function {
	env := map[string]*string{"TABLE_NAME": a.Table.TableName()}
	description := "codescan-api " + f.Group + " (report ingestion, bulk triage, exports)"
	if f.Mailer() {
		env[deployspec.KMSKeyEnv] = a.Key.KeyArn()
		env["MAIL_FROM"] = &s.MailFrom
		env["SES_CONFIGURATION_SET"] = &s.SESConfigurationSet
		env["APP_BASE_URL"] = &s.AppBaseURL
		description = "codescan-api " + f.Group + " (notification delivery)"
	}
	if f.UsesReports() {
		env[deployspec.ReportsEnv] = a.Reports.BucketName()
	}
	for k, v := range f.Env {
		env[k] = jsii.String(v)
	}
	fn := a.newFunction(f, s, removal, description, env)
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(f.TableActions...),
		Resources: &[]*string{a.Table.TableArn(), jsii.String(*a.Table.TableArn() + "/index/*")},
	}))
	a.grantReports(fn, f)
	if !f.Mailer() {
		return fn
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(f.KMSActions...), Resources: &[]*string{a.Key.KeyArn()},
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(deployspec.SESAction),
		Resources: &[]*string{
			a.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("identity"), ResourceName: &s.SESIdentity}),
			a.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("configuration-set"), ResourceName: &s.SESConfigurationSet}),
		},
	}))
	return fn
}

// streamFilters are the worker's event source mapping filters: the
// patterns of deployspec as they are, in the form FilterCriteria_Filter
// gives (a pattern, the JSON the mapping takes), so both templates carry
// the same text.
func streamFilters(f deployspec.Function) *[]*map[string]any {
	var out []*map[string]any
	for _, p := range f.StreamFilters {
		out = append(out, &map[string]any{"pattern": p})
	}
	return &out
}

// tableStream is the table's stream setting: new images, for the
// dispatcher's outbox items.
const tableStream = awsdynamodb.StreamViewType_NEW_IMAGE
