// Command sendorder sends one order file to the local Service Bus emulator's orders queue, with
// MessageId = orderId (contract 1.x; contract 2.0 producers use package producer), so `func start` has a first message.
// It lives in its own module so the handler's module does not depend on the Service Bus SDK.
//
//	cd local/sendorder && go run . ../../bicep/deploy/sample-order.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
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
	var order struct {
		OrderID string `json:"orderId"`
	}
	if err := json.Unmarshal(body, &order); err != nil || order.OrderID == "" {
		return fmt.Errorf("%s: no orderId (%v)", args[0], err)
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
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: body, MessageID: &order.OrderID}, nil); err != nil {
		return fmt.Errorf("send order %s: %w", order.OrderID, err)
	}
	fmt.Printf("sent order %s to orders (MessageId %s)\n", order.OrderID, order.OrderID)
	return nil
}
