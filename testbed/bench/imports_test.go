package bench

import (
	"os/exec"
	"strings"
	"testing"
)

const azcosmosPath = "github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

// TestProductionImportsOfAzcosmos: package cosmos is the only production
// package that imports azcosmos; this measurement package and the host
// emulator, whose Cosmos DB trigger is a Cosmos client of its own as the
// extension is, are the exceptions, and the executable links neither.
func TestProductionImportsOfAzcosmos(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/ordersink/orders-consumer/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/ordersink/orders-consumer/cosmos":            true,
		"github.com/ordersink/orders-consumer/cosmos/cosmostest": true,
		"github.com/ordersink/orders-consumer/testbed/bench":     true,
		"github.com/ordersink/orders-consumer/testbed/hostemu":   true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp == azcosmosPath && !allowed[fields[0]] {
				t.Errorf("%s imports azcosmos; only package cosmos may", fields[0])
			}
		}
	}
	deps, err := exec.Command("go", "list", "-deps", "github.com/ordersink/orders-consumer/cmd/handler").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range []string{"testbed/bench", "testbed/hostemu"} {
		if strings.Contains(string(deps), "github.com/ordersink/orders-consumer/"+pkg+"\n") {
			t.Errorf("cmd/handler links %s", pkg)
		}
	}
}
