// Package verify checks what a chaos run or make run left behind: the
// proxy's ledger of the creates Cosmos accepted, the fate of every message,
// and the checks that the consumer's invariants held against the documents
// read back.
package verify

import (
	"time"

	"github.com/ordersink/orders-consumer/testbed/faults"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// Evidence is everything a run leaves to check.
type Evidence struct {
	Messages []*hostemu.Message
	Fates    *Tracker
	Queue    hostemu.QueueCounts
	Worker   hostemu.WorkerStats
	Dead     []hostemu.DeadLetter
	// Created is the proxy's ledger (nil without the proxy: the checks
	// that need it are left out).
	Created map[string][]string
	Atomic  bool
	// Outages took place during the run; CreatedAt is when Cosmos
	// answered each orderId's first create (the ledger); RecoveryBound is
	// how soon after an outage orders must be created again.
	Outages       []faults.OutageRecord
	CreatedAt     map[string]time.Time
	RecoveryBound time.Duration
	// OnlyOrders, when not nil, limits the documents read back to these
	// orderIds: a run that continues an earlier one in the same database.
	OnlyOrders map[string]bool
}
