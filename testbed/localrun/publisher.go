package localrun

import (
	"github.com/ordersink/orders-consumer/testbed/rig"
)

// addPublisher gives rc the outbox publisher of a run: no faults of its own
// (make chaos has them), and a poison document in the partition of the
// stream's latest order, to show it is set aside without holding up what
// follows it. A resumed run writes none: its stream is an earlier run's.
func addPublisher(rc *rig.Config, opts Options) {
	rc.Publisher, rc.PublisherSeed = true, opts.Seed
	if !opts.Resume {
		rc.PoisonPartition = rig.LateOrder(opts.Messages)
	}
}
