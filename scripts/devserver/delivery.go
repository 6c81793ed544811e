package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/sweep"
	"github.com/acme/codescan-api/shared/tickets"
)

// newDispatcher is the dispatcher of the local stack: mail to the catcher
// at smtpAddr, links to baseURL, loopback receivers and source-code hosts
// allowed unless configured otherwise.
func newDispatcher(ctx context.Context, st *store.Store, smtpAddr, baseURL string, level slog.Level) (*deliveryengine.Engine, error) {
	for _, name := range []string{deliveryengine.EnvAllowLoopback, scmhost.EnvAllowLoopback} {
		if os.Getenv(name) == "" {
			_ = os.Setenv(name, "true") // loopback receivers and hosts, before any group reads it
		}
	}
	_ = os.Setenv(deliveryengine.EnvSMTPAddr, smtpAddr)
	if os.Getenv(deliveryengine.EnvAppURL) == "" {
		_ = os.Setenv(deliveryengine.EnvAppURL, baseURL)
	}
	return deliveryengine.FromEnv(ctx, deliveryengine.StoreOf(st), prdecor.StoreOf(st), tickets.StoreOf(st), st.Tickets, config.NewLogger(level))
}

// startDelivery runs, until ctx ends, what AWS runs beside the API: the
// dispatcher and the ingester (scans, bulk triage operations and exports)
// on the table's stream (a poller each, as AWS gives each its own event
// source mapping, so deliveries never hold up an upload; each keeps its
// read position in a file of checkpointDir, so a restart does not read the
// stream's last 24 hours again) and the scheduled jobs (retries every few
// seconds; SLA checks, the weekly digest, the stalled-scan sweep and the
// tickets' reconciliation every five minutes), all on
// the same code.
func startDelivery(ctx context.Context, d *deliveryengine.Engine, st *store.Store, endpoint, checkpointDir string, reports *s3reports.Store) error {
	log := d.Log
	streams, err := localstream.NewClient(ctx, endpoint)
	if err != nil {
		return err
	}
	in := &ingester.Ingester{Store: ingester.StoreOf(st), Reports: reports, Log: log, Exporter: &exportjob.Worker{Store: exportjob.StoreOf(st), Bucket: reports, Log: log}}
	for name, p := range map[string]*localstream.Poller{
		"dispatcher": {Dispatcher: d, DB: st.Client(), Table: st.TableName(), Streams: streams},
		"ingester":   {DB: st.Client(), Table: st.TableName(), Log: log, Consumers: []localstream.Consumer{in.HandleImage}, Streams: streams},
	} {
		p.Checkpoint = &localstream.Checkpoint{Path: filepath.Join(checkpointDir, "stream-"+name+".json")}
		go func() {
			if err := p.Run(ctx); err != nil {
				log.Error("stream poller stopped", "consumer", name, "error", err.Error())
			}
		}()
	}
	go func() {
		retries, jobs := time.NewTicker(2*time.Second), time.NewTicker(5*time.Minute)
		defer retries.Stop()
		defer jobs.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-retries.C:
				if _, err := d.RunDue(ctx); err != nil {
					log.Error("retries", "error", err.Error())
				}
			case now := <-jobs.C:
				if _, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil {
					log.Error("sla checks", "error", err.Error())
				}
				if _, err := scheduler.WeeklyDigest(ctx, scheduler.StoreOf(st), now); err != nil {
					log.Error("weekly digest", "error", err.Error())
				}
				if _, err := sweep.Run(ctx, sweep.StoreOf(st), now); err != nil {
					log.Error("stalled scans", "error", err.Error())
				}
				if _, err := scheduler.ReconcileTickets(ctx, st.Tenancy, scheduler.TicketerOf(d)); err != nil {
					log.Error("tickets reconciliation", "error", err.Error())
				}
			}
		}
	}()
	return nil
}
