package orders

// Admit judges a body as [Processor.Process] does before it writes anything:
// the rules of docs/contract.md §3, the event size included, for the order
// as a producer sends it (MessageId by [MessageID]). SubmitOrder admits its
// bodies with it, so an order is refused alike whichever way it comes in.
// The error is a *[RejectError], as ParseOrder's.
func (p *Processor) Admit(body []byte) (*Order, error) {
	o, err := ParseOrder(body)
	if err != nil {
		return nil, err
	}
	if err := p.checkEvent(o, Acceptance{MessageID: MessageID(o.ID, body), AcceptedAt: p.now()}); err != nil {
		return nil, err
	}
	return o, nil
}
