package main

import (
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/tabledef"
)

// APIStack is one regional deployment of the whole API: its own table (the
// region's data stays in the region), KMS key, functions and REST API.
type APIStack struct {
	awscdk.Stack
	Table     awsdynamodb.Table
	Key       awskms.Key
	API       awsapigateway.RestApi
	Functions map[string]awslambda.Function // by group
	// Notification delivery: the dispatcher and the scheduler, and the
	// dispatcher's failure destination.
	Workers      map[string]awslambda.Function
	FailureQueue awssqs.Queue
	// Uploaded reports and their chunks (the region's, like the table),
	// and the ingester's failure destination.
	Reports            awss3.Bucket
	IngestFailureQueue awssqs.Queue
	// What its alarms notify (alarms.go).
	AlarmTopic awssns.Topic
}

// NewStacks adds the primary and the EU deployment to app.
func NewStacks(app awscdk.App, s Settings) (primary, eu *APIStack) {
	awscdk.Tags_Of(app).Add(jsii.String("service"), jsii.String("codescan-api"), nil)
	awscdk.Tags_Of(app).Add(jsii.String("stage"), jsii.String(s.Stage), nil)
	primary = NewAPIStack(app, "codescan-api-"+s.Stage+"-primary", s.PrimaryRegion, s)
	eu = NewAPIStack(app, "codescan-api-"+s.Stage+"-eu", s.EURegion, s)
	return primary, eu
}

// NewAPIStack builds one regional deployment.
func NewAPIStack(scope constructs.Construct, id, region string, s Settings) *APIStack {
	prod := s.Production()
	stack := awscdk.NewStack(scope, &id, &awscdk.StackProps{
		Env:                   &awscdk.Environment{Account: &s.Account, Region: &region},
		Description:           jsii.String("codescan-api " + s.Stage + " in " + region + ": REST API /api/v1, one Lambda function per endpoint group, DynamoDB table"),
		TerminationProtection: &prod,
	})
	// Production keeps its data (table, secrets key, logs) when the stack
	// or a resource goes away; other stages clean up after themselves.
	removal := awscdk.RemovalPolicy_DESTROY
	if prod {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	a := &APIStack{Stack: stack, Functions: map[string]awslambda.Function{}, Workers: map[string]awslambda.Function{}}

	a.addTable(prod, removal)

	a.Key = awskms.NewKey(stack, jsii.String("IntegrationSecretsKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the secure tokens of source-code-host integrations"),
		Alias:             jsii.String("alias/codescan-api-" + s.Stage + "-integration-secrets"),
		EnableKeyRotation: jsii.Bool(true),
		// Without the key the stored tokens are unreadable: it stays as
		// long as the table does.
		RemovalPolicy: removal,
	})

	a.addReportBucket(removal)
	for _, f := range deployspec.All() {
		a.Functions[f.Group] = a.function(f, s, removal)
	}
	a.addWorkers(s, removal)

	a.addAPI(s, removal)
	a.addAlarms(s)

	awscdk.NewCfnOutput(stack, jsii.String("ApiBaseUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("Base URL of the API in " + region + " (ends in " + routes.BasePath + ")"),
		Value:       a.API.UrlForPath(jsii.String(routes.BasePath)),
	})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{Value: a.Table.TableName()})
	awscdk.NewCfnOutput(stack, jsii.String("IntegrationSecretsKeyArn"), &awscdk.CfnOutputProps{Value: a.Key.KeyArn()})
	return a
}

// function is one group's Lambda function with exactly the grants its
// deployspec lists.
func (a *APIStack) function(f deployspec.Function, s Settings, removal awscdk.RemovalPolicy) awslambda.Function {
	env := map[string]*string{
		"TABLE_NAME":   a.Table.TableName(),
		"JWT_ISSUER":   &s.JWTIssuer,
		"JWT_AUDIENCE": &s.JWTAudience,
		"JWKS_URL":     &s.JWKSURL,
		// Every function that writes the audit log stamps its entries' expiry.
		"AUDIT_RETENTION_DAYS": jsii.String(strconv.Itoa(s.AuditRetentionDays)),
	}
	if len(f.KMSActions) > 0 {
		env[deployspec.KMSKeyEnv] = a.Key.KeyArn()
	}
	if f.UsesReports() {
		env[deployspec.ReportsEnv] = a.Reports.BucketName()
	}
	fn := a.newFunction(f, s, removal, "codescan-api "+f.Group+" endpoints", env)
	if len(f.TableActions) > 0 {
		resources := []*string{a.Table.TableArn()}
		if f.NeedsIndexes() {
			resources = append(resources, jsii.String(*a.Table.TableArn()+"/index/*"))
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(f.TableActions...), Resources: &resources,
		}))
	}
	if len(f.KMSActions) > 0 {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(f.KMSActions...), Resources: &[]*string{a.Key.KeyArn()},
		}))
	}
	a.grantReports(fn, f)
	return fn
}

// newFunction is the Lambda function of f (arm64, provided.al2023, its
// bootstrap from the build directory, traced, its GOMEMLIMIT set) with its
// own log group.
func (a *APIStack) newFunction(f deployspec.Function, s Settings, removal awscdk.RemovalPolicy, description string, env map[string]*string) awslambda.Function {
	env[deployspec.GoMemLimitEnv] = jsii.String(f.GoMemLimit())
	logs := awslogs.NewLogGroup(a.Stack, jsii.String(f.Name()+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_THREE_MONTHS,
		RemovalPolicy: removal,
	})
	return awslambda.NewFunction(a.Stack, jsii.String(f.Name()+"Function"), &awslambda.FunctionProps{
		Description:  &description,
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(s.BuildDir, f.Group)), nil),
		MemorySize:   jsii.Number(f.MemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(f.TimeoutSeconds)),
		Tracing:      awslambda.Tracing_ACTIVE,
		Environment:  &env,
		LogGroup:     logs,
	})
}

// addReportBucket adds the region's bucket of uploaded reports: encrypted
// with S3-managed keys, public access blocked, TLS enforced, objects
// expired by prefix (reports after a week, chunks of an unfinished upload
// after a day, exports after ExportDays, with the parts of an export
// whose writer died).
func (a *APIStack) addReportBucket(removal awscdk.RemovalPolicy) {
	a.Reports = awss3.NewBucket(a.Stack, jsii.String("ReportBucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{
			{Id: jsii.String("expire-reports"), Prefix: jsii.String(deployspec.ReportsPrefix), Expiration: awscdk.Duration_Days(jsii.Number(deployspec.ReportDays))},
			{Id: jsii.String("expire-chunks"), Prefix: jsii.String(deployspec.ChunksPrefix), Expiration: awscdk.Duration_Days(jsii.Number(deployspec.ChunkDays))},
			{Id: jsii.String("expire-sources"), Prefix: jsii.String(deployspec.SourcesPrefix), Expiration: awscdk.Duration_Days(jsii.Number(deployspec.SourceDays))},
			{Id: jsii.String("expire-exports"), Prefix: jsii.String(deployspec.ExportsPrefix), Expiration: awscdk.Duration_Days(jsii.Number(deployspec.ExportDays)),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(deployspec.AbortUploadDays))},
		},
		RemovalPolicy: removal,
	})
	awscdk.NewCfnOutput(a.Stack, jsii.String("ReportBucketName"), &awscdk.CfnOutputProps{Value: a.Reports.BucketName()})
}

// grantReports gives fn exactly its report bucket actions: object actions
// on its prefixes only, bucket actions (listing) on the bucket.
func (a *APIStack) grantReports(fn awslambda.Function, f deployspec.Function) {
	if !f.UsesReports() {
		return
	}
	for _, g := range f.ReportObjects {
		var objects []*string
		for _, p := range g.Prefixes {
			objects = append(objects, a.Reports.ArnForObjects(jsii.String(p+"*")))
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(g.Actions...), Resources: &objects,
		}))
	}
	if len(f.ReportBucketActions) > 0 {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(f.ReportBucketActions...), Resources: &[]*string{a.Reports.BucketArn()},
		}))
	}
}

// addTable adds the single table, its indexes and its stream.
func (a *APIStack) addTable(prod bool, removal awscdk.RemovalPolicy) {
	a.Table = awsdynamodb.NewTable(a.Stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(tabledef.PK), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(tabledef.SK), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:          awsdynamodb.TableEncryption_AWS_MANAGED,
		TimeToLiveAttribute: jsii.String(tabledef.TTLAttribute),
		DeletionProtection:  &prod,
		RemovalPolicy:       removal,
		Stream:              tableStream,
	})
	for _, ix := range tabledef.Indexes {
		a.Table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(ix.PK), Type: awsdynamodb.AttributeType_STRING},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(ix.SK), Type: awsdynamodb.AttributeType_STRING},
			ProjectionType: awsdynamodb.ProjectionType(ix.Projection),
		})
	}
}

// addAPI adds the REST API with its access log, every route of the route
// table bound to its group's function.
func (a *APIStack) addAPI(s Settings, removal awscdk.RemovalPolicy) {
	accessLogs := awslogs.NewLogGroup(a.Stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_THREE_MONTHS,
		RemovalPolicy: removal,
	})
	a.API = awsapigateway.NewRestApi(a.Stack, jsii.String("Api"), &awsapigateway.RestApiProps{
		RestApiName:           jsii.String("codescan-api-" + s.Stage),
		Description:           jsii.String("codescan-api " + s.Stage + ": every route of the route table under /api/v1"),
		EndpointConfiguration: &awsapigateway.EndpointConfiguration{Types: &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL}},
		// Access logs need the account's API Gateway CloudWatch role.
		CloudWatchRole: jsii.Bool(true),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            &s.Stage,
			ThrottlingRateLimit:  &s.ThrottleRate,
			ThrottlingBurstLimit: &s.ThrottleBurst,
			TracingEnabled:       jsii.Bool(true),
			MetricsEnabled:       jsii.Bool(true),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(deployspec.AccessLogFormat)),
		},
	})
	integrations := map[string]awsapigateway.LambdaIntegration{}
	for g, fn := range a.Functions {
		// Each method's invoke permission is scoped to that method and
		// the deployed stage (no console test-invoke permission).
		integrations[g] = awsapigateway.NewLambdaIntegration(fn, &awsapigateway.LambdaIntegrationOptions{AllowTestInvoke: jsii.Bool(false)})
	}
	for _, r := range routes.Table {
		a.API.Root().ResourceForPath(jsii.String(r.FullPath())).AddMethod(jsii.String(r.Method), integrations[r.Group], nil)
	}
}
