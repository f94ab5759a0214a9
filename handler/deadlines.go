package handler

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/ordersink/orders-consumer/orders"
	"github.com/ordersink/orders-consumer/retrying"
)

// Deadline defaults, below the platform's clocks (docs/contract.md §2,
// docs/adr/0007-holding-through-outages.md).
const (
	// DefaultMessageDeadline leaves a minute of the 5-minute functionTimeout
	// and maxAutoLockRenewalDuration: 8 deliveries held this long and the
	// 9th ride out an outage of 36 minutes.
	DefaultMessageDeadline = 4 * time.Minute
	// DefaultBatchDeadline leaves 20 s of the queue's 1-minute lock, which
	// is never renewed for a batch, for the answer and the settlement.
	DefaultBatchDeadline = 40 * time.Second
	// DefaultAuthAlarmAfter: role assignments usually propagate within
	// minutes; a 401/403 that lasts longer than this needs an operator.
	DefaultAuthAlarmAfter = time.Minute
)

func (cfg *Config) setClockDefaults() {
	if cfg.MessageDeadline <= 0 {
		cfg.MessageDeadline = DefaultMessageDeadline
	}
	if cfg.BatchDeadline <= 0 {
		cfg.BatchDeadline = DefaultBatchDeadline
	}
	if cfg.AuthAlarmAfter <= 0 {
		cfg.AuthAlarmAfter = DefaultAuthAlarmAfter
	}
	if cfg.Health != nil && cfg.Health.OnChange == nil {
		cfg.Health.OnChange = healthLog(cfg.Logger, cfg.AuthAlarmAfter)
	}
}

// healthLog logs the store going down once a probe has failed too (one
// dropped request is not an outage worth a line), its coming back, and
// while it stays down a line per alarmAfter: at ERROR when the store refuses
// the consumer's identity, because that needs an operator, else at WARN.
func healthLog(log *slog.Logger, alarmAfter time.Duration) func(retrying.HealthChange) {
	var (
		announced bool
		logged    time.Time
	)
	// Health calls this with its state locked: the calls never overlap.
	return func(c retrying.HealthChange) {
		now := time.Now()
		attrs := append([]any{"downSince", c.Since.UTC().Format(time.RFC3339Nano), "downForMs", now.Sub(c.Since).Milliseconds(),
			"failedProbes", c.FailedProbes}, storeErrAttrs(c.Err)...)
		switch {
		case !c.Down:
			if announced {
				log.Info("store back", attrs...)
			}
			announced = false
		case c.FailedProbes == 0:
		case !announced:
			announced, logged = true, now
			log.Warn("store down: invocations are held until it answers", attrs...)
		case now.Sub(logged) >= alarmAfter:
			logged = now
			log.Log(context.Background(), storeDownLevel(c.Err, now.Sub(c.Since), alarmAfter), "store still down", attrs...)
		}
	}
}

// storeDownLevel is ERROR for an authorization refusal older than
// alarmAfter, WARN otherwise.
func storeDownLevel(err error, downFor, alarmAfter time.Duration) slog.Level {
	var se *orders.StoreError
	if errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden) && downFor >= alarmAfter {
		return slog.LevelError
	}
	return slog.LevelWarn
}

func storeErrAttrs(err error) []any {
	var se *orders.StoreError
	if !errors.As(err, &se) {
		if err == nil {
			return nil
		}
		return []any{"err", err.Error()}
	}
	return []any{"status", se.Status, "subStatus", se.SubStatus, "err", err.Error()}
}
