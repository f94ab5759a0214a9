// Package cosmostest gives integration tests a Cosmos DB endpoint: the one in
// COSMOS_ENDPOINT (and COSMOS_KEY), such as a real account or Microsoft's
// emulator, or else a local emulator started for the test binary with
// scripts/emulator.sh. Each test binary gets its own database, deleted at the end.
package cosmostest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
	"github.com/ordersink/orders-consumer/internal/loopback"
)

// EmulatorKey is the Cosmos emulators' well-known public key.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Env is a Cosmos endpoint with a fresh database for one test binary.
type Env struct {
	Endpoint  string
	Key       string
	Database  string
	Container string
	Store     *cosmos.Store
	// Keys is the idempotency key store, in container cosmos.KeyContainer.
	Keys Keys
	// DB reads and deletes the database beside Store.
	DB *Database
	// LocalEmulator is true when the endpoint is the local emulator, whose
	// transactional batches are not atomic: tests of rollback skip there.
	LocalEmulator bool
	stop          func()
}

// Start returns an Env; call Close when the tests are done. name is part of
// the database name so concurrent test binaries do not meet.
func Start(name string) (*Env, error) {
	e := &Env{Endpoint: os.Getenv("COSMOS_ENDPOINT"), Key: os.Getenv("COSMOS_KEY"), Container: "orders", stop: func() {}}
	if e.Endpoint == "" {
		if err := e.startEmulator(); err != nil {
			return nil, err
		}
	} else {
		// scripts/test.sh sets this when it started the local emulator itself.
		e.LocalEmulator = os.Getenv("COSMOS_LOCAL_EMULATOR") == "1"
	}
	e.Database = fmt.Sprintf("itest-%s-%s", name, randomHex(4))
	store, err := cosmos.Open(cosmos.Options{Endpoint: e.Endpoint, Key: e.Key}, e.Database, e.Container)
	if err != nil {
		e.stop()
		return nil, err
	}
	e.Store = store
	if e.DB, err = OpenDatabase(e.Options(), e.Database, e.Container); err != nil {
		e.stop()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.Keys = e.DB.Keys(store.KeyStore(cosmos.KeyContainer), cosmos.KeyContainer)
	err = store.CreateContainers(ctx)
	if err == nil {
		err = e.Keys.CreateContainer(ctx)
	}
	if err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

// Close deletes the database and stops an emulator started by Start.
func (e *Env) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = e.DB.Delete(ctx)
	e.stop()
}

// Readable returns the Env's Store with Documents.
func (e *Env) Readable() Readable { return Readable{Store: e.Store, Database: e.DB} }

// Options returns the cosmos.Options that reach the Env's endpoint.
func (e *Env) Options() cosmos.Options { return cosmos.Options{Endpoint: e.Endpoint, Key: e.Key} }

func (e *Env) startEmulator() error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	port, err := loopback.FreePort()
	if err != nil {
		return err
	}
	script := filepath.Join(root, "scripts", "emulator.sh")
	env := append(os.Environ(), "COSMOS_EMULATOR_PORT="+strconv.Itoa(port))
	cmd := exec.Command(script, "start")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start emulator: %w", err)
	}
	e.Endpoint = fmt.Sprintf("http://127.0.0.1:%d/", port)
	e.Key = EmulatorKey
	e.LocalEmulator = true
	e.stop = func() {
		stop := exec.Command(script, "stop")
		stop.Env, stop.Stderr = env, os.Stderr
		_ = stop.Run()
	}
	return nil
}

// RepoRoot finds the module root from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
