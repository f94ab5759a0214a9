package localrun

import (
	"github.com/ordersink/orders-consumer/testbed/rig"
)

// publisherConfig is the outbox publisher of a run: no faults of its own
// (make chaos has them), and a poison document in the partition of the
// stream's latest order, to show it is set aside without holding up what
// follows it. A resumed run writes none: its stream is an earlier run's.
func publisherConfig(opts Options) *rig.PublisherConfig {
	pc := &rig.PublisherConfig{Seed: opts.Seed}
	if !opts.Resume {
		pc.PoisonPartition = rig.LateOrder(opts.Messages)
	}
	return pc
}
