package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/routes"
)

// trigger is how many of the last periods must breach.
type trigger struct{ datapoints, periods float64 }

var (
	// What only a bug or an exhausted limit produces alarms at once: any
	// in one 5-minute period.
	atOnce = trigger{1, 1}
	// Rates alarm when they last: 3 of 5 one-minute periods, so that one
	// 500 at night (one request of one is 100 %) pages nobody.
	lasting = trigger{3, 5}
)

// addAlarms adds the stack's alarms, the encrypted SNS topic they notify
// on ALARM and on OK (with an email subscriber when the AlarmEmail
// parameter is set) and one dashboard. README "Alarms" lists the
// thresholds.
func (a *APIStack) addAlarms(s Settings) {
	prefix := *a.StackName() // alarm names, so grants can name our alarms only
	var topicKey awskms.IKey
	a.AlarmTopic, topicKey = a.alarmTopic(prefix)
	a.addMailConfiguration(s, topicKey)
	set := &alarmSet{stack: a, prefix: prefix, action: awscloudwatchactions.NewSnsAction(a.AlarmTopic)}
	fns := a.namedFunctions()
	w := dashboardMetrics{}
	set.apiAlarms()
	set.functionAlarms(fns)
	w.throttles, w.systemErrors = set.tableAlarms()
	w.bounceRate, w.complaintRate = set.mailAlarms()
	set.jobAlarms()
	w.queueDepths = set.queueAlarms()
	w.iteratorAges = set.streamAlarms(fns)
	a.addDashboard(prefix, fns, set.alarms, w)
}

// alarmSet adds alarms named after the stack, each notifying action on
// ALARM and on OK, and keeps them for the dashboard.
type alarmSet struct {
	stack  *APIStack
	prefix string
	action awscloudwatch.IAlarmAction
	alarms []interfacesawscloudwatch.IAlarmRef
}

func (set *alarmSet) add(id, why string, metric awscloudwatch.IMetric, threshold float64, t trigger) {
	al := awscloudwatch.NewAlarm(set.stack.Stack, jsii.String(id+"Alarm"), &awscloudwatch.AlarmProps{
		AlarmName:          jsii.String(set.prefix + "-" + id),
		AlarmDescription:   &why,
		Metric:             metric,
		Threshold:          &threshold,
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		DatapointsToAlarm:  &t.datapoints,
		EvaluationPeriods:  &t.periods,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	al.AddAlarmAction(set.action)
	al.AddOkAction(set.action)
	set.alarms = append(set.alarms, al)
}

// apiAlarms: the API stage's error rate and latency.
func (set *alarmSet) apiAlarms() {
	stage := set.stack.API.DeploymentStage()
	// The API answers 5xx only for a bug or an exhausted retry budget
	// (503); for REST APIs the average of 5XXError is the rate.
	set.add("Api5xxRate", "API 5xx rate >= 1% in 3 of 5 minutes (bugs or exhausted retries; see the access log)", stage.MetricServerError(stat("Average", 1, "")), 0.01, lasting)
	// Routes are a few DynamoDB calls (tens of ms) and uploads answer once
	// the report is stored: 2 s at p99 means retries, throttling or
	// functions near their timeouts. 5-minute periods: a minute's p99 is
	// its slowest request, often a cold start.
	set.add("ApiLatencyP99", "API p99 latency >= 2 s in 2 of 3 five-minute periods (retries, throttling or functions near their timeout)", stage.MetricLatency(stat("p99", 5, "")), 2000, trigger{2, 3})
}

// functionAlarms: every function's errors and throttles.
func (set *alarmSet) functionAlarms(fns []namedFunction) {
	for _, n := range fns {
		// Handlers answer their errors and stream workers report failed
		// records as batch item failures, so a Lambda error is a crash, a
		// timeout, out of memory or a failed scheduled job: each needs a look.
		set.add(n.name+"Errors", n.name+": function errors >= 1 in 5 minutes (a crash, timeout, out of memory or failed job; see its log group)", n.fn.MetricErrors(stat("Sum", 5, "")), 1, atOnce)
		// No function reserves concurrency: a throttle means the region's
		// account limit is used up and requests fail.
		set.add(n.name+"Throttles", n.name+": function throttles >= 1 in 5 minutes (the region's Lambda concurrency is used up)", n.fn.MetricThrottles(stat("Sum", 5, "")), 1, atOnce)
	}
}

// tableAlarms: the table's lasting throttling and system errors; it
// returns both metrics for the dashboard.
func (set *alarmSet) tableAlarms() (throttles, systemErrors awscloudwatch.IMetric) {
	// On demand, the table throttles only a hot partition (one project's
	// counters) or a surge past twice the previous peak; the store retries
	// both, so only lasting throttling turns into 503s.
	throttles = set.stack.tableSum("ThrottledRequests")
	set.add("TableThrottles", "table: throttled requests in 3 of 5 minutes (a hot partition or a surge; retries run out as 503s)", throttles, 1, lasting)
	// DynamoDB's own 500s: the SDK retries them, so a lasting series is a
	// regional problem.
	systemErrors = set.stack.tableSum("SystemErrors")
	set.add("TableSystemErrors", "table: DynamoDB system errors in 3 of 5 minutes (a regional DynamoDB problem)", systemErrors, 1, lasting)
	return throttles, systemErrors
}

// mailAlarms: SES's bounce and complaint rates, returned for the
// dashboard.
func (set *alarmSet) mailAlarms() (bounceRate, complaintRate awscloudwatch.IMetric) {
	// SES puts an account under review at a 5 % bounce or 0.1 % complaint
	// rate and may pause its sending at 10 % or 0.5 %: alarm at the first.
	// The rates are the account's, over its recent sends (no dimension).
	bounceRate = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/SES"), MetricName: jsii.String("Reputation.BounceRate"), Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(15))})
	complaintRate = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/SES"), MetricName: jsii.String("Reputation.ComplaintRate"), Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(15))})
	set.add("MailBounceRate", "SES bounce rate >= 5% (SES reviews the account; at 10% it may stop sending; bounces reach the alarm topic)", bounceRate, 0.05, atOnce)
	set.add("MailComplaintRate", "SES complaint rate >= 0.1% (SES reviews the account; at 0.5% it may stop sending; complaints reach the alarm topic)", complaintRate, 0.001, atOnce)
	return bounceRate, complaintRate
}

// jobAlarms: a failure of any scheduled job.
func (set *alarmSet) jobAlarms() {
	for _, j := range deployspec.JobAlarms {
		dims := map[string]*string{"Service": jsii.String("scheduler"), "Job": jsii.String(j.Job)}
		set.add(j.ID, j.Why, appMetric(metrics.JobFailures, dims, "Sum", float64(j.Period)/60, j.Job), 1, atOnce)
	}
}

// queueAlarms: a message in either failure queue; it returns their
// depths for the dashboard.
func (set *alarmSet) queueAlarms() []awscloudwatch.IMetric {
	var queueDepths []awscloudwatch.IMetric
	for _, q := range []struct {
		name, worker string
		queue        awssqs.Queue
	}{
		{"DispatcherFailureQueue", deployspec.WorkerDispatcher, set.stack.FailureQueue},
		{"IngesterFailureQueue", deployspec.WorkerIngester, set.stack.IngestFailureQueue},
	} {
		depth := q.queue.MetricApproximateNumberOfMessagesVisible(stat("Maximum", 5, ""))
		queueDepths = append(queueDepths, depth.With(&awscloudwatch.MetricOptions{Label: &q.worker}))
		// A message there is a notification never sent or a scan left
		// processing until someone replays it. The workers report failed
		// records as batch item failures, not as errors: only this shows
		// them. The alarm stays until the queue is empty.
		set.add(q.name+"Messages", q.name+": messages >= 1 (records "+q.worker+" gave up on; replay them)", depth, 1, atOnce)
	}
	return queueDepths
}

// streamAlarms: a stream consumer's records waiting too long; it returns
// their iterator ages for the dashboard.
func (set *alarmSet) streamAlarms(fns []namedFunction) []awscloudwatch.IMetric {
	var iteratorAges []awscloudwatch.IMetric
	for _, n := range fns {
		if !n.readsStream {
			continue // not a stream consumer
		}
		age := n.fn.Metric(jsii.String("IteratorAge"), stat("Maximum", 5, ""))
		iteratorAges = append(iteratorAges, age.With(&awscloudwatch.MetricOptions{Label: &n.group}))
		// A stream record waited longer than an ingestion may take (900 s):
		// records queue behind each other, not behind one slow scan.
		set.add(n.name+"IteratorAge", n.name+": stream iterator age >= 15 minutes (records wait: scans stay processing, notifications late, exports queued)", age, 15*60*1000, atOnce)
	}
	return iteratorAges
}

// dashboardMetrics are the alarms' metrics the dashboard graphs too.
type dashboardMetrics struct {
	throttles, systemErrors, bounceRate, complaintRate awscloudwatch.IMetric
	queueDepths, iteratorAges                          []awscloudwatch.IMetric
}

// addDashboard adds the stack's one dashboard: the API, the functions,
// the table, the queues and streams, mail, and the service's own metrics.
func (a *APIStack) addDashboard(prefix string, fns []namedFunction, alarms []interfacesawscloudwatch.IAlarmRef, w dashboardMetrics) {
	stage := a.API.DeploymentStage()
	perFunction := func(metric func(awslambda.Function, *awscloudwatch.MetricOptions) awscloudwatch.Metric, statistic string) *[]awscloudwatch.IMetric {
		var out []awscloudwatch.IMetric
		for _, n := range fns {
			out = append(out, metric(n.fn, stat(statistic, 5, n.group)))
		}
		return &out
	}
	dashboard := awscloudwatch.NewDashboard(a.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   &prefix,
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	dashboard.AddWidgets(
		graph("API requests and errors a minute", &[]awscloudwatch.IMetric{
			stage.MetricCount(stat("Sum", 1, "requests")), stage.MetricClientError(stat("Sum", 1, "4xx")), stage.MetricServerError(stat("Sum", 1, "5xx")),
		}),
		graph("API latency (ms)", &[]awscloudwatch.IMetric{stage.MetricLatency(stat("p50", 5, "p50")), stage.MetricLatency(stat("p99", 5, "p99"))}),
		awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{Title: jsii.String("Alarms"), Alarms: &alarms, Width: jsii.Number(8), Height: jsii.Number(6)}),
	)
	dashboard.AddWidgets(
		graph("Function errors", perFunction(awslambda.Function.MetricErrors, "Sum")),
		graph("Function throttles", perFunction(awslambda.Function.MetricThrottles, "Sum")),
		graph("Function duration p99 (ms)", perFunction(awslambda.Function.MetricDuration, "p99")),
	)
	dashboard.AddWidgets(
		graph("Table throttled requests and system errors a minute", &[]awscloudwatch.IMetric{w.throttles, w.systemErrors}),
		graph("Failure queue messages", &w.queueDepths),
		graph("Stream iterator age (ms)", &w.iteratorAges),
	)
	dashboard.AddWidgets(graph("SES bounce and complaint rate", &[]awscloudwatch.IMetric{w.bounceRate, w.complaintRate}))
	addServiceWidgets(dashboard)
}

// addServiceWidgets shows the metrics the functions emit in embedded
// metric format (shared/metrics): 429s and 503s by route group, delivery
// attempts by channel and outcome with their latency, and the scheduled
// jobs. Each metric is listed with its full dimension set, as CloudWatch
// keys EMF metrics by all their dimensions.
func addServiceWidgets(dashboard awscloudwatch.Dashboard) {
	var limited, unavailable []awscloudwatch.IMetric
	for _, g := range routes.Groups() {
		dims := map[string]*string{"Service": jsii.String("api"), "Group": jsii.String(g)}
		limited = append(limited, appMetric(metrics.RateLimited, dims, "Sum", 1, g))
		unavailable = append(unavailable, appMetric(metrics.Unavailable, dims, "Sum", 1, g))
	}
	var attempts, latency []awscloudwatch.IMetric
	for _, ch := range []string{metrics.ChannelEmail, metrics.ChannelWebhook} {
		for _, o := range metrics.DeliveryOutcomes {
			dims := map[string]*string{"Service": jsii.String("delivery"), "Channel": jsii.String(ch), "Outcome": jsii.String(o)}
			attempts = append(attempts, appMetric(metrics.DeliveryAttempts, dims, "Sum", 5, ch+" "+o))
			if o == metrics.OutcomeDelivered {
				latency = append(latency, appMetric(metrics.DeliveryLatency, dims, "p99", 5, ch+" p99"))
			}
		}
	}
	var durations, items, failures []awscloudwatch.IMetric
	for _, j := range deployspec.Schedules {
		dims := map[string]*string{"Service": jsii.String("scheduler"), "Job": jsii.String(j.Name)}
		durations = append(durations, appMetric(metrics.JobDuration, dims, "Maximum", 60, j.Name))
		items = append(items, appMetric(metrics.JobItems, dims, "Sum", 60, j.Name))
		failures = append(failures, appMetric(metrics.JobFailures, dims, "Sum", 60, j.Name))
	}
	dashboard.AddWidgets(
		graph("Rate-limited answers (429) a minute by group", &limited),
		graph("Unavailable answers (503) a minute by group", &unavailable),
		graph("Delivery attempts by outcome (5 min)", &attempts),
	)
	dashboard.AddWidgets(
		graph("Delivery latency p99 (ms)", &latency),
		graph("Scheduled job duration, max an hour (ms)", &durations),
		graph("Scheduled job items and failures an hour", ptr(append(items, failures...))),
	)
}

// appMetric is one of the service's own metrics (namespace
// metrics.Namespace).
func appMetric(name string, dims map[string]*string, statistic string, minutes float64, label string) awscloudwatch.IMetric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(name), DimensionsMap: &dims,
		Statistic: jsii.String(statistic), Period: awscdk.Duration_Minutes(jsii.Number(minutes)), Label: jsii.String(label),
	})
}

func ptr[T any](v T) *T { return &v }

// alarmTopic is the topic of the alarms: encrypted with a key of its own
// (CloudWatch cannot use the AWS-managed aws/sns key, so alarms would
// publish nothing; the integration secrets key stays for secrets), TLS
// only, published to by this stack's alarms only, and the AlarmEmail
// parameter's subscriber when it is given.
func (a *APIStack) alarmTopic(prefix string) (awssns.Topic, awskms.IKey) {
	cloudwatch := &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)}
	ourAlarms := &map[string]any{
		"StringEquals": map[string]any{"aws:SourceAccount": a.Account()},
		"ArnLike": map[string]any{"aws:SourceArn": a.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"), ResourceName: jsii.String(prefix + "-*"),
			ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})},
	}
	key := awskms.NewKey(a.Stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the alarm notifications of " + prefix),
		EnableKeyRotation: jsii.Bool(true),
		// It protects notifications in flight only.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: cloudwatch, Actions: jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"), Resources: jsii.Strings("*"), Conditions: ourAlarms,
	}), nil)
	topic := awssns.NewTopic(a.Stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String(prefix + " alarms"),
		MasterKey:   key,
		EnforceSSL:  jsii.Bool(true),
	})
	// The topic policy replaces SNS's default one: CloudWatch is named.
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: cloudwatch, Actions: jsii.Strings("sns:Publish"), Resources: &[]*string{topic.TopicArn()}, Conditions: ourAlarms,
	}))

	email := awscdk.NewCfnParameter(a.Stack, jsii.String("AlarmEmail"), &awscdk.CfnParameterProps{
		Type:                  jsii.String("String"),
		Default:               jsii.String(""),
		Description:           jsii.String("Email address that receives the alarms (it must confirm the subscription); empty: none"),
		AllowedPattern:        jsii.String(`^$|^[^@\s]+@[^@\s]+$`),
		ConstraintDescription: jsii.String("an email address or empty"),
	})
	hasEmail := awscdk.NewCfnCondition(a.Stack, jsii.String("HasAlarmEmail"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(email.ValueAsString(), jsii.String(""))),
	})
	sub := awssns.NewCfnSubscription(a.Stack, jsii.String("AlarmEmailSubscription"), &awssns.CfnSubscriptionProps{
		TopicArn: topic.TopicArn(), Protocol: jsii.String("email"), Endpoint: email.ValueAsString(),
	})
	sub.CfnOptions().SetCondition(hasEmail)
	awscdk.NewCfnOutput(a.Stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("SNS topic of the alarms: subscribe paging or chat here"),
		Value:       topic.TopicArn(),
	})
	return topic, key
}

type namedFunction struct {
	group, name string // deployspec.Function's Group and Name
	fn          awslambda.Function
	readsStream bool // deployspec.Function's ReadsStream
}

// namedFunctions are the stack's functions, route groups then workers, in
// deployspec order.
func (a *APIStack) namedFunctions() []namedFunction {
	var out []namedFunction
	for _, f := range deployspec.All() {
		out = append(out, namedFunction{f.Group, f.Name(), a.Functions[f.Group], f.ReadsStream()})
	}
	for _, f := range deployspec.Workers() {
		out = append(out, namedFunction{f.Group, f.Name(), a.Workers[f.Group], f.ReadsStream()})
	}
	return out
}

// tableSum is the table's metric summed over deployspec.TableOperations. SUM([...])
// adds what each minute has; m1 + m2 would be empty in a minute where one
// operation has no data point, and these metrics have data only when
// something went wrong.
func (a *APIStack) tableSum(metric string) awscloudwatch.IMetric {
	using := map[string]awscloudwatch.IMetric{}
	var ids []string
	for _, op := range deployspec.TableOperations {
		id := strings.ToLower(metric + "_" + op) // unique on a graph of both sums
		using[id] = a.Table.Metric(&metric, &awscloudwatch.MetricOptions{
			DimensionsMap: &map[string]*string{"TableName": a.Table.TableName(), "Operation": jsii.String(op)},
			Statistic:     jsii.String("Sum"),
			Period:        awscdk.Duration_Minutes(jsii.Number(1)),
		})
		ids = append(ids, id)
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("SUM([" + strings.Join(ids, ",") + "])"),
		UsingMetrics: &using,
		Label:        &metric,
		Period:       awscdk.Duration_Minutes(jsii.Number(1)),
	})
}

func stat(statistic string, minutes float64, label string) *awscloudwatch.MetricOptions {
	o := &awscloudwatch.MetricOptions{Statistic: &statistic, Period: awscdk.Duration_Minutes(&minutes)}
	if label != "" {
		o.Label = &label
	}
	return o
}

func graph(title string, metrics *[]awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: &title, Left: metrics, Width: jsii.Number(8), Height: jsii.Number(6)})
}
