package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// receiver is what ordersctl needs of a peek-lock receiver on one queue;
// *azservicebus.Receiver has it, tests give a fake.
type receiver interface {
	PeekMessages(ctx context.Context, max int, o *azservicebus.PeekMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
	ReceiveMessages(ctx context.Context, max int, o *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
	CompleteMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.CompleteMessageOptions) error
	AbandonMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.AbandonMessageOptions) error
}

// maxPeek bounds how many messages a listing reads from each queue, and how
// many a settle walks past.
const maxPeek = 1000

// parkingMaxDeliveries is the parking queue's maxDeliveryCount
// (bicep/modules/servicebus.bicep).
const parkingMaxDeliveries = 10

// opTimeout bounds each call to Service Bus (a peek, a complete, an
// abandon), so a namespace that stops answering fails the command instead
// of hanging the operator's shell.
var opTimeout = 30 * time.Second

// receiveWait is how long Settle waits for the next message before it takes
// the queue for empty; tests shorten it.
var receiveWait = 5 * time.Second

// azureQueues are the parking queue, orders' dead-letter sub-queue and the
// parking queue's own in Azure Service Bus (or its emulator).
type azureQueues struct {
	namespace, parkingName string // for the errors
	// emulator: reached with a connection string, not Microsoft Entra ID.
	emulator                                bool
	parking, deadLetters, parkedDeadLetters receiver
	sender                                  func() (messageSender, error)
	close                                   func(context.Context)
	cut                                     []string // queues the last List stopped reading at maxPeek
	// peeked is what the last List saw of each queue, in order.
	peeked map[string][]peekedMessage
}

// peekedMessage is where a message stood in a listing and the delivery count
// the peek reported.
type peekedMessage struct {
	seq        int64
	deliveries uint32
}

// serviceBus says how to reach Service Bus: a namespace with Microsoft
// Entra ID, or the emulator's connection string.
type serviceBus struct{ namespace, connectionString string }

// emulatorConnectionString is the Service Bus emulator's published
// connection string (local/compose.yaml; its key is a placeholder).
const emulatorConnectionString = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"

// checkConnectionString lets the SDK parse cs (NewClientFromConnectionString
// dials nothing) and refuses one that is not the emulator's: as the SDK
// reads it (names in any case, the last value of a name wins), it must say
// UseDevelopmentEmulator=true and name an endpoint on this machine. In
// Azure no key works (disableLocalAuth, docs/adr/0005-identity-only.md), so
// a key an operator pasted would only be a secret in the shell's history.
func checkConnectionString(cs string) error {
	if _, err := azservicebus.NewClientFromConnectionString(cs, nil); err != nil {
		return err
	}
	emulator, host := false, ""
	for _, part := range strings.Split(cs, ";") {
		name, value, _ := strings.Cut(part, "=")
		switch {
		case strings.EqualFold(name, "UseDevelopmentEmulator"):
			emulator, _ = strconv.ParseBool(value)
		case strings.EqualFold(name, "Endpoint"):
			host = ""
			if u, err := url.Parse(value); err == nil {
				host = u.Hostname()
			}
		}
	}
	if !emulator || !onThisMachine(host) {
		return errors.New("ordersctl takes the Service Bus emulator's connection string only (UseDevelopmentEmulator=true, an endpoint on this machine); Azure: --namespace, with Microsoft Entra ID")
	}
	return nil
}

// onThisMachine reports whether host is localhost or a loopback address.
func onThisMachine(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// newAzureQueues opens the queues with Microsoft Entra ID (az login, a
// managed identity), or the emulator's connection string.
func newAzureQueues(sb serviceBus, parking string) (*azureQueues, error) {
	a := &azureQueues{namespace: sb.namespace, parkingName: parking, emulator: sb.connectionString != ""}
	var client *azservicebus.Client
	if a.emulator {
		a.namespace = "the Service Bus emulator"
		var err error
		if client, err = azservicebus.NewClientFromConnectionString(sb.connectionString, nil); err != nil {
			return nil, fmt.Errorf("service bus emulator: %w", err)
		}
	} else {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("credential (Microsoft Entra ID): %w", err)
		}
		if client, err = azservicebus.NewClient(sb.namespace, cred, nil); err != nil {
			return nil, fmt.Errorf("service bus %s: %w", sb.namespace, err)
		}
	}
	dlq := &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter}
	for _, r := range []struct {
		to    *receiver
		queue string
		o     *azservicebus.ReceiverOptions
	}{{&a.parking, parking, nil}, {&a.deadLetters, "orders", dlq}, {&a.parkedDeadLetters, parking, dlq}} {
		rcv, err := client.NewReceiverForQueue(r.queue, r.o)
		if err != nil {
			return nil, err
		}
		*r.to = rcv
	}
	a.sender = func() (messageSender, error) { return client.NewSender("orders", nil) }
	a.close = func(ctx context.Context) { _ = client.Close(ctx) }
	return a, nil
}

func (a *azureQueues) receiver(queue string) receiver {
	switch queue {
	case deadLetterQueue:
		return a.deadLetters
	case parkedDeadLetterQueue:
		return a.parkedDeadLetters
	}
	return a.parking
}

// parkedFrom describes a message received from queue.
func parkedFrom(queue string, m *azservicebus.ReceivedMessage) Parked {
	switch queue {
	case parkingQueue:
		return fromEnvelope(seqOf(m), m.MessageID, m.Body)
	case parkedDeadLetterQueue:
		p := fromEnvelope(seqOf(m), m.MessageID, m.Body)
		p.Queue = parkedDeadLetterQueue
		p.BrokerReason = strings.TrimSuffix(deref(m.DeadLetterReason)+": "+deref(m.DeadLetterErrorDescription), ": ")
		return p
	}
	p := fromDeadLetter(seqOf(m), m.MessageID, int(m.DeliveryCount), deref(m.DeadLetterReason),
		deref(m.DeadLetterErrorDescription), deref(m.Subject), m.Body)
	if m.EnqueuedTime != nil {
		p.ParkedAt = m.EnqueuedTime.UTC().Format(time.RFC3339)
	}
	return p
}

func (a *azureQueues) List(ctx context.Context) ([]Parked, error) {
	var out []Parked
	a.cut, a.peeked = nil, map[string][]peekedMessage{}
	for _, queue := range queueKinds {
		more, err := peekAll(ctx, a.receiver(queue), func(m *azservicebus.ReceivedMessage) {
			out = append(out, parkedFrom(queue, m))
			a.peeked[queue] = append(a.peeked[queue], peekedMessage{seq: seqOf(m), deliveries: m.DeliveryCount})
		})
		if err != nil {
			return nil, a.explain(fmt.Errorf("%s queue: %w", queue, err))
		}
		if more {
			a.cut = append(a.cut, queue)
		}
	}
	return out, nil
}

func (a *azureQueues) Cut() []string { return a.cut }

// peekAll hands f the first maxPeek messages of r's queue and says whether
// the queue holds more: it peeks one beyond the limit to know.
func peekAll(ctx context.Context, r receiver, f func(*azservicebus.ReceivedMessage)) (more bool, err error) {
	for n := 0; n <= maxPeek; {
		peekCtx, cancel := context.WithTimeout(ctx, opTimeout)
		batch, err := r.PeekMessages(peekCtx, min(100, maxPeek+1-n), nil)
		cancel()
		if err != nil {
			return false, fmt.Errorf("peek: %w", err)
		}
		if len(batch) == 0 {
			return false, nil
		}
		for _, m := range batch {
			if n == maxPeek {
				return true, nil
			}
			n++
			f(m)
		}
	}
	return false, nil
}

// Settle receives in peek-lock from the head of the queue until every
// chosen message was met, the queue yields none within receiveWait, it
// walked as far as the last chosen message stood in the listing, or the
// first lock it holds is about to run out. The others
// it meets stay locked until the end, then are abandoned: abandoning each at
// once would hand it straight back. Each receive counts a delivery, the cost
// of reaching a message that is not at the head, so on the parking queue
// Settle refuses a walk that would pass a message on its last delivery
// (see walk). Peek-lock, act, complete: a crash leaves the message in the
// queue, never lost. walked is called for every message received.
func (a *azureQueues) Settle(ctx context.Context, queue string, chosen map[int64]bool, act actFunc, walked func()) (map[int64]error, error) {
	r := a.receiver(queue)
	results := map[int64]error{}
	ahead, err := a.walk(queue, chosen)
	if err != nil {
		for seq := range chosen {
			results[seq] = err
		}
		return results, err
	}
	var (
		passed []*azservicebus.ReceivedMessage
		// locksEnd is when the first lock Settle holds runs out: a receive
		// after it would take that message again and count another of its
		// deliveries, so the walk stops before.
		locksEnd time.Time
	)
	hold := func(m *azservicebus.ReceivedMessage) {
		passed = append(passed, m)
		if m.LockedUntil != nil && (locksEnd.IsZero() || m.LockedUntil.Before(locksEnd)) {
			locksEnd = *m.LockedUntil
		}
	}
	defer func() { abandonAll(ctx, r, passed) }()
	for n := 0; len(results) < len(chosen) && n < ahead; {
		if !locksEnd.IsZero() && time.Until(locksEnd) < receiveWait+time.Second {
			break // what is not reached is reported; a second run goes on
		}
		wait, cancel := context.WithTimeout(ctx, receiveWait)
		// Never more than the walk has left: a message received beyond the
		// last chosen one would count a delivery for nothing.
		batch, err := r.ReceiveMessages(wait, min(10, ahead-n), nil)
		cancel()
		if err != nil && !(errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
			return results, a.explain(fmt.Errorf("receive from the %s queue: %w", queue, err))
		}
		if len(batch) == 0 {
			break
		}
		for _, m := range batch {
			n++
			walked()
			seq := seqOf(m)
			switch _, seen := results[seq]; {
			case !chosen[seq] || seen:
				hold(m)
			case ctx.Err() != nil:
				// Interrupted: the rest of the batch goes back unsent.
				results[seq] = fmt.Errorf("interrupted before it was settled: %w", ctx.Err())
				hold(m)
			default:
				// One not completed stays locked with the passed ones: given
				// back now, it would be received again and lengthen the walk.
				if results[seq] = a.settleOne(ctx, r, queue, m, act); results[seq] != nil {
					hold(m)
				}
			}
		}
	}
	return results, nil
}

// walk is how many messages Settle may receive to meet the chosen ones: as
// many as the last List showed up to the last chosen (maxPeek without a
// listing). On the parking queue it is an error when one of those it would
// pass is on its last delivery by the peek's count (one short, a margin for
// what a peek reports): abandoned, the broker would move it to the parking
// queue's own dead-letter queue (parked-deadletter), where it is still
// listed and settled, but out of the parking queue's order and reason.
func (a *azureQueues) walk(queue string, chosen map[int64]bool) (int, error) {
	listed := a.peeked[queue]
	if len(listed) == 0 {
		return maxPeek, nil
	}
	var last int64
	for seq := range chosen {
		last = max(last, seq)
	}
	ahead := 0
	var risky []string
	for _, m := range listed {
		if m.seq > last {
			continue
		}
		ahead++
		if queue == parkingQueue && !chosen[m.seq] && m.deliveries >= parkingMaxDeliveries-1 {
			risky = append(risky, strconv.FormatInt(m.seq, 10))
		}
	}
	if len(risky) > 0 {
		return 0, fmt.Errorf("reaching the chosen messages would pass %s, on the last of its %d deliveries: the broker would move it to %s/$deadletterqueue (parked-deadletter); deal with it first (name it)",
			strings.Join(risky, ", "), parkingMaxDeliveries, a.parkingName)
	}
	return max(ahead, 1), nil
}

// Around each action, within the message's lock: the action (a send) must
// end completeMargin before the lock does, so the complete that follows
// still holds it, and is not begun with less than minActTime to go. A
// resubmission sent under a lost lock could not be completed: the message
// would stay parked and its order go to orders twice.
const (
	completeMargin = 5 * time.Second
	minActTime     = 5 * time.Second
)

func (a *azureQueues) settleOne(ctx context.Context, r receiver, queue string, m *azservicebus.ReceivedMessage, act actFunc) error {
	actCtx, cancel := ctx, context.CancelFunc(func() {})
	if m.LockedUntil != nil {
		end := m.LockedUntil.Add(-completeMargin)
		if time.Until(end) < minActTime {
			return fmt.Errorf("not done: its lock ends in %s, too soon to act and complete it; run again", time.Until(*m.LockedUntil).Round(time.Second))
		}
		actCtx, cancel = context.WithDeadline(ctx, end)
	}
	err := act(actCtx, parkedFrom(queue, m))
	cancel()
	if err != nil {
		return a.explain(err)
	}
	// Once act has sent a resubmission, an interrupt must not stop the
	// complete: the message would stay parked and be sent a second time.
	completeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	if err := r.CompleteMessage(completeCtx, m, nil); err != nil {
		return a.explain(notCompleted(err))
	}
	return nil
}

// explain adds to err what the operator can do about it, when Service Bus
// or Microsoft Entra ID said why it failed.
func (a *azureQueues) explain(err error) error {
	var (
		sbErr   *azservicebus.Error
		authErr *azidentity.AuthenticationFailedError
	)
	switch {
	case a.emulator:
		return fmt.Errorf("%w; is the Service Bus emulator running (local/compose.yaml), and the connection string its own?", err)
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeUnauthorizedAccess:
		return fmt.Errorf("%w; %s refused the signed-in identity: it needs the role Azure Service Bus Data Receiver on the queues and Data Sender on orders, the deployer roles of bicep/modules/rbac.bicep", err, a.namespace)
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeNotFound:
		return fmt.Errorf("%w; a queue does not exist in %s: check --namespace, and --parking-queue (%s)", err, a.namespace, a.parkingName)
	// A chain with no credential available has no exported error type; its
	// message names the chain.
	case errors.As(err, &authErr) || strings.Contains(err.Error(), "DefaultAzureCredential"):
		return fmt.Errorf("%w; no Microsoft Entra ID token for %s: run az login (or give the machine a managed identity)", err, a.namespace)
	}
	return err
}

// abandonAll abandons locked messages, even when ctx has ended (an
// interrupted run), all within one opTimeout: a namespace that stopped
// answering must not hold the operator's shell for one deadline per
// message. What it leaves, and its errors, are not the operator's concern:
// an expired lock gives a message back too.
func abandonAll(ctx context.Context, r receiver, msgs []*azservicebus.ReceivedMessage) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	for _, m := range msgs {
		if ctx.Err() != nil {
			return
		}
		_ = r.AbandonMessage(ctx, m, nil)
	}
}

func (a *azureQueues) Sender() (messageSender, error) { return a.sender() }

// Close closes the client's links within opTimeout, interrupted or not.
func (a *azureQueues) Close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	a.close(ctx)
}

func seqOf(m *azservicebus.ReceivedMessage) int64 {
	if m.SequenceNumber == nil {
		return 0
	}
	return *m.SequenceNumber
}
