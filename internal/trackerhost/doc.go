// Package trackerhost runs loopback trackers for tests: a GitHub issues
// host and a Jira Cloud site, each speaking the vendor's wire format for
// the operations our ticket client calls, keeping the tickets in memory,
// and validating every request against the vendor's published OpenAPI
// description (testdata). A request that is not described, or does not
// match its schema, fails the test. Tests drive the far side through the
// servers too: close or reopen a ticket as a person would, and build the
// signed webhook deliveries the tracker would send.
package trackerhost
