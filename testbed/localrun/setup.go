package localrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
	"github.com/ordersink/orders-consumer/testbed/hostemu"
)

// selectFunctions returns the functions that read the stream's queue. Named
// functions run even when disabled (the others on that queue are switched
// off through their AzureWebJobs.<name>.Disabled setting, as an operator
// would); otherwise every enabled Service Bus function runs, and they must
// all read one queue.
func selectFunctions(app *hostemu.App, settings *hostemu.Settings, names []string) ([]*hostemu.Function, error) {
	var chosen []*hostemu.Function
	if len(names) > 0 {
		for _, n := range names {
			fn := app.Function(n)
			if fn == nil {
				return nil, fmt.Errorf("no function %q under %s", n, app.Root)
			}
			if fn.ServiceBusQueue() == "" {
				return nil, fmt.Errorf("function %s has no serviceBusTrigger on a queue; the emulator feeds only those", n)
			}
			chosen = append(chosen, fn)
		}
		for _, fn := range app.Functions {
			settings.Set("AzureWebJobs."+fn.Name+".Disabled", fmt.Sprint(!slices.Contains(chosen, fn)))
		}
	} else {
		for _, fn := range app.Functions {
			if fn.ServiceBusQueue() != "" && !fn.Disabled && !settings.FunctionDisabled(fn.Name) {
				chosen = append(chosen, fn)
			}
		}
		if len(chosen) == 0 {
			return nil, errors.New("every Service Bus function is disabled; name one with -function")
		}
	}
	for _, fn := range chosen[1:] {
		if fn.ServiceBusQueue() != chosen[0].ServiceBusQueue() {
			return nil, fmt.Errorf("functions %s and %s read different queues; choose with -function", chosen[0].Name, fn.Name)
		}
	}
	return chosen, nil
}

// notRun says why each function that does not run is left out.
func notRun(app *hostemu.App, settings *hostemu.Settings, chosen []*hostemu.Function, httpOn bool) []string {
	var out []string
	for _, fn := range app.Functions {
		switch {
		case slices.Contains(chosen, fn):
		case strings.EqualFold(fn.Trigger().Type, "cosmosDBTrigger"):
			if fn.Disabled || settings.FunctionDisabled(fn.Name) {
				out = append(out, fn.Name+" (disabled)")
			} // else it runs beside the queue, on the container's change feed
		case httpOn && strings.EqualFold(fn.Trigger().Type, "httpTrigger"):
			out = append(out, fn.Name+" (httpTrigger: served by the HTTP listener, not fed by the stream)")
		case fn.ServiceBusQueue() == "":
			out = append(out, fmt.Sprintf("%s (%s: not emulated)", fn.Name, fn.Trigger().Type))
		case fn.Disabled || settings.FunctionDisabled(fn.Name):
			out = append(out, fn.Name+" (disabled)")
		default:
			out = append(out, fmt.Sprintf("%s (reads queue %s)", fn.Name, fn.ServiceBusQueue()))
		}
	}
	return out
}

// ordersDB is the Cosmos database the run writes to and checks.
type ordersDB struct {
	docs     *cosmostest.Database
	name     string
	endpoint string
	fresh    bool
}

// openDatabase connects with the handler's own settings. Without a name it
// creates a fresh database (local emulators and key-authenticated accounts)
// so that the check sees only this run's orders; a named one must hold no
// orders yet, unless the run resumes an earlier one.
func openDatabase(ctx context.Context, settings *hostemu.Settings, name string, resume bool) (*ordersDB, error) {
	endpoint, _ := settings.Get("COSMOS_ENDPOINT")
	if endpoint == "" {
		return nil, errors.New("COSMOS_ENDPOINT is not set (environment, local.settings.json or -setting); make run starts the local emulator for you")
	}
	key, _ := settings.Get("COSMOS_KEY")
	container, _ := settings.Get("COSMOS_CONTAINER")
	if container == "" {
		container = "orders"
		settings.Set("COSMOS_CONTAINER", container)
	}
	db := &ordersDB{name: name, endpoint: endpoint, fresh: name == ""}
	if db.fresh {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		db.name = "hostemu-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
	}
	settings.Set("COSMOS_DATABASE", db.name)
	store, err := cosmos.Open(cosmos.Options{Endpoint: endpoint, Key: key}, db.name, container)
	if err != nil {
		return nil, err
	}
	if db.docs, err = cosmostest.OpenDatabase(cosmos.Options{Endpoint: endpoint, Key: key}, db.name, container); err != nil {
		return nil, err
	}
	if db.fresh {
		if err := store.CreateContainers(ctx); err != nil {
			return nil, fmt.Errorf("create a fresh database (give an empty one with -database when the account does not allow it): %w", err)
		}
		keys, _ := settings.Get("IDEMPOTENCY_CONTAINER")
		if keys == "" {
			keys = cosmos.KeyContainer
		}
		if err := store.KeyStore(keys).CreateContainer(ctx); err != nil {
			return nil, fmt.Errorf("create the idempotency key container %s: %w", keys, err)
		}
		return db, nil
	}
	docs, err := db.docs.Documents(ctx, "order")
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db.name, err)
	}
	if len(docs) > 0 && !resume {
		return nil, fmt.Errorf("database %s already holds %d orders; the check needs an empty one (or omit -database for a fresh one, or -resume to continue its run)", db.name, len(docs))
	}
	return db, nil
}

func (db *ordersDB) close(keep bool) {
	if !db.fresh || keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = db.docs.Delete(ctx)
}
