package hostemu

import (
	"fmt"
	"strings"
)

// sendToOwnQueue enqueues the output messages addressed to the queue the
// trigger reads (a batch giving messages back), as the broker would: new
// messages with a MessageId of their own and DeliveryCount 1.
func (h *Host) sendToOwnQueue(inv *Invocation, outs []OutputMessage) {
	for _, m := range outs {
		if m.ContentType != "" && strings.EqualFold(m.Type, "serviceBus") && m.Entity == h.opts.Queue.Name {
			msg := &Message{Body: []byte(m.Text), ContentType: m.ContentType, MessageID: newGUID()}
			if h.opts.Enqueued != nil {
				h.opts.Enqueued(inv, msg)
			}
			h.opts.Queue.Send(msg)
		}
	}
}

// settle completes or abandons each delivery of a finished invocation, as
// the host does after its answer, and books what the broker made of it.
func (h *Host) settle(inv *Invocation) {
	inv.Settlements = make([]Settlement, len(inv.Deliveries))
	for i, d := range inv.Deliveries {
		if inv.OK() {
			inv.Settlements[i] = h.opts.Queue.Complete(d)
		} else {
			inv.Settlements[i] = h.opts.Queue.Abandon(d, inv.Failure)
		}
		if inv.Settlements[i] == LockLost {
			h.opts.Log(fmt.Sprintf("%s invocation %s: completing %s failed: MessageLockLost (the lock expired after %s)",
				inv.Function, inv.ID, d.Message.MessageID, h.opts.Queue.LockDuration))
		}
	}
}
