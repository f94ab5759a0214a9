package main

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// peeker is what listing needs of a receiver: peeking locks nothing and
// changes nothing. *azservicebus.Receiver has it; tests give a fake.
type peeker interface {
	PeekMessages(ctx context.Context, max int, o *azservicebus.PeekMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
}

// maxPeek bounds how many messages a listing reads from each queue.
const maxPeek = 1000

// readAzure peeks the parking queue and the orders queue's dead-letter
// sub-queue, up to maxPeek messages each.
func readAzure(ctx context.Context, parking, deadLetters peeker) ([]Parked, error) {
	var out []Parked
	err := peekAll(ctx, parking, func(m *azservicebus.ReceivedMessage) error {
		p, err := fromEnvelope(m.Body)
		if err != nil {
			return fmt.Errorf("parking queue message %s: %w", m.MessageID, err)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = peekAll(ctx, deadLetters, func(m *azservicebus.ReceivedMessage) error {
		p := fromDeadLetter(m.MessageID, int(m.DeliveryCount), deref(m.DeadLetterReason), deref(m.DeadLetterErrorDescription), string(m.Body))
		if m.EnqueuedTime != nil {
			p.ParkedAt = m.EnqueuedTime.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

func peekAll(ctx context.Context, p peeker, f func(*azservicebus.ReceivedMessage) error) error {
	for n := 0; n < maxPeek; {
		batch, err := p.PeekMessages(ctx, min(100, maxPeek-n), nil)
		if err != nil {
			return fmt.Errorf("peek: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, m := range batch {
			if err := f(m); err != nil {
				return err
			}
		}
		n += len(batch)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// newClient is a Service Bus client authenticated with Microsoft Entra ID
// (az login, managed identity): no connection string exists anywhere.
func newClient(namespace string) (*azservicebus.Client, error) {
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("credential (Microsoft Entra ID): %w", err)
	}
	return azservicebus.NewClient(namespace, cred, nil)
}

// azureQueues opens peekers on the parking queue and on orders' dead-letter
// sub-queue with Microsoft Entra ID.
func azureQueues(namespace, parking string) (p, dl peeker, closeFn func(context.Context), err error) {
	client, err := newClient(namespace)
	if err != nil {
		return nil, nil, nil, err
	}
	pr, err := client.NewReceiverForQueue(parking, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	dr, err := client.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		return nil, nil, nil, err
	}
	return pr, dr, func(ctx context.Context) { _ = client.Close(ctx) }, nil
}
