package orders

// Admit judges a body as [Processor.Process] does before it writes anything:
// the rules of docs/contract.md §3, the event size included, for the order
// as a producer sends it (MessageId by [MessageID]). SubmitOrder admits its
// bodies with it, so an order is refused alike whichever way it comes in.
// It returns the order and that MessageId. The error is a *[RejectError],
// as ParseOrder's.
func (p *Processor) Admit(body []byte) (o *Order, messageID string, err error) {
	if o, err = ParseOrder(body); err != nil {
		return nil, "", err
	}
	messageID = MessageID(o.ID, body)
	if _, err := p.acceptance(o, Acceptance{MessageID: messageID, AcceptedAt: p.now()}); err != nil {
		return nil, "", err
	}
	return o, messageID, nil
}
