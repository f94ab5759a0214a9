package main

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/ordersink/orders-consumer/internal/clocks"
	"github.com/ordersink/orders-consumer/internal/funcapp"
)

// hostClocks are the platform's time limits an invocation lives under
// (docs/contract.md §2). Unset, the first two come from host.json and the
// lock duration is the queue's default of bicep/ (DefaultConfig).
type hostClocks struct {
	// HostJSON is the host.json the deployment runs with; the handler
	// starts in the app's root, where it is.
	HostJSON        string        `envconfig:"HOST_JSON"`
	FunctionTimeout time.Duration `envconfig:"HOST_FUNCTION_TIMEOUT"`
	LockRenewal     time.Duration `envconfig:"HOST_MAX_AUTO_LOCK_RENEWAL"`
	LockDuration    time.Duration `envconfig:"QUEUE_LOCK_DURATION"`
}

// The platform's defaults when neither a setting nor host.json says.
const (
	defaultFunctionTimeout = 5 * time.Minute
	defaultLockRenewal     = 5 * time.Minute
)

// checkClocks fills the host clocks from host.json where no setting gives
// them, and refuses deadlines that do not fit in them.
func (c *config) checkClocks() error {
	if err := c.Host.fromHostJSON(); err != nil {
		return err
	}
	h := c.Host
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"COSMOS_OPERATION_TIMEOUT", c.OperationTimeout}, {"MESSAGE_DEADLINE", c.MessageDeadline}, {"BATCH_DEADLINE", c.BatchDeadline},
		{"COSMOS_PROBE_INTERVAL", c.ProbeInterval}, {"AUTH_ALARM_AFTER", c.AuthAlarmAfter}, {"SUBMIT_DEADLINE", c.SubmitDeadline}} {
		if d.value <= 0 {
			return fmt.Errorf("%s must be positive, got %s", d.name, d.value)
		}
	}
	limits := []struct {
		setting, clock string
		value, limit   time.Duration
	}{
		{"MESSAGE_DEADLINE", "functionTimeout", c.MessageDeadline, h.FunctionTimeout},
		{"MESSAGE_DEADLINE", "maxAutoLockRenewalDuration", c.MessageDeadline, h.LockRenewal},
		{"BATCH_DEADLINE", "the queue's lock duration (QUEUE_LOCK_DURATION; batches are never lock-renewed)", c.BatchDeadline, h.LockDuration},
		{"BATCH_DEADLINE", "functionTimeout", c.BatchDeadline, h.FunctionTimeout},
		{"SUBMIT_DEADLINE", "functionTimeout", c.SubmitDeadline, h.FunctionTimeout},
	}
	for _, l := range limits {
		if err := clocks.Within(l.setting, l.value, l.clock, l.limit); err != nil {
			return err
		}
	}
	if c.OperationTimeout > c.BatchDeadline || c.OperationTimeout > c.MessageDeadline {
		return fmt.Errorf("COSMOS_OPERATION_TIMEOUT %s exceeds MESSAGE_DEADLINE %s or BATCH_DEADLINE %s: one attempt must fit in an invocation",
			c.OperationTimeout, c.MessageDeadline, c.BatchDeadline)
	}
	if err := clocks.SubmitWithinLease(c.SubmitDeadline, c.KeyLease); err != nil {
		return err
	}
	if c.ProbeInterval > c.BatchDeadline {
		return fmt.Errorf("COSMOS_PROBE_INTERVAL %s exceeds BATCH_DEADLINE %s", c.ProbeInterval, c.BatchDeadline)
	}
	return nil
}

// tolerated is the store outage a message rides out without being parked:
// every delivery up to the retry budget holds for the deadline.
func (c config) tolerated() time.Duration { return time.Duration(c.RetryBudget) * c.MessageDeadline }

// fromHostJSON reads functionTimeout and maxAutoLockRenewalDuration from
// host.json where no setting gave them; a missing host.json means the
// platform's defaults.
func (h *hostClocks) fromHostJSON() error {
	doc, err := funcapp.LoadHost(h.HostJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("HOST_JSON %s: %w", h.HostJSON, err)
	}
	for _, f := range []struct {
		field       *time.Duration
		text, name  string
		platformDef time.Duration
	}{
		{&h.FunctionTimeout, doc.FunctionTimeout, "functionTimeout", defaultFunctionTimeout},
		{&h.LockRenewal, doc.Extensions.ServiceBus.MaxAutoLockRenewalDuration, "maxAutoLockRenewalDuration", defaultLockRenewal},
	} {
		if *f.field > 0 {
			continue
		}
		*f.field = f.platformDef
		if f.text == "" {
			continue
		}
		d, err := funcapp.ParseTimeSpan(f.text)
		if err != nil {
			return fmt.Errorf("HOST_JSON %s: %s: %w", h.HostJSON, f.name, err)
		}
		*f.field = d
	}
	return nil
}
