package chaos

import (
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/ordersink/orders-consumer/cosmos/cosmostest"
)

// The Cosmos endpoint of the integration tests, started on first use so the
// proxy's unit tests need none.
var cosmosDB = cosmostest.NewShared("chaos")

func cosmosEnv(t *testing.T) *cosmostest.Env {
	t.Helper()
	env := cosmosDB.Env(t)
	// The proxy forwards only to loopback http endpoints: a run never
	// injects faults into a real account.
	if u, err := url.Parse(env.Endpoint); err != nil || u.Scheme != "http" || !loopback(u.Hostname()) {
		t.Skipf("COSMOS_ENDPOINT %s is not a loopback http emulator; the fault proxy does not forward there", env.Endpoint)
	}
	return env
}

// loopback is the fault proxy's own rule for an upstream it forwards to.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func TestMain(m *testing.M) { os.Exit(cosmosDB.Main(m)) }
