// Command sendorder sends one order file to the local Service Bus emulator's orders queue
// (local/compose.yaml), so `func start` has a first message. The message is built by package
// producer: the MessageId of docs/contract.md §3 ("<orderId>:<16 hex digits of the body's
// SHA-256>"), ContentType and Subject. It lives in its own module (the main one through a replace)
// so that the product's module holds no connection-string code: the emulator accepts nothing else.
//
//	cd local/sendorder && go run . ../../bicep/deploy/sample-order.json
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/ordersink/orders-consumer/producer"
)

// emulator is the Service Bus emulator's published local connection string (no secret).
const emulator = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sendorder:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: sendorder <order.json>")
	}
	body, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	msg, err := producer.OrderMessage(body)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	client, err := azservicebus.NewClientFromConnectionString(emulator, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer client.Close(ctx)
	sender, err := client.NewSender("orders", nil)
	if err != nil {
		return err
	}
	defer sender.Close(ctx)
	if err := sender.SendMessage(ctx, msg, nil); err != nil {
		return fmt.Errorf("send %s: %w", *msg.MessageID, err)
	}
	fmt.Printf("sent %s to orders (MessageId %s)\n", args[0], *msg.MessageID)
	return nil
}
