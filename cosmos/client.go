// Package cosmos stores orders in Azure Cosmos DB for NoSQL. It is the only
// package that imports the Cosmos SDK.
package cosmos

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Options configure the connection to a Cosmos DB account.
type Options struct {
	// Endpoint is the account endpoint, https://acct.documents.azure.com:443/.
	// http:// is accepted only for loopback hosts (local emulators).
	Endpoint string
	// Key is an account key, for emulators only. When empty the client
	// authenticates with Microsoft Entra ID (managed identity in Azure).
	Key string
	// MaxConnsPerHost is how many idle connections are kept per host, so
	// that concurrent invocations reuse them; it should be at least
	// host.json's maxConcurrentCalls. It does not cap open connections.
	MaxConnsPerHost int
	// Transport replaces the HTTP transport (tests count round trips with it).
	Transport http.RoundTripper
}

// NewClient builds a Cosmos client from Options.
func NewClient(o Options) (*azcosmos.Client, error) {
	dial, err := newDialer(o)
	if err != nil {
		return nil, err
	}
	return dial()
}

// newDialer checks Options and returns a function that builds a client. The
// clients it builds share one connection pool and one credential (and its
// token cache), so building another costs no connection and no token.
func newDialer(o Options) (func() (*azcosmos.Client, error), error) {
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	opts := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		// Per-attempt wall clock cap; the SDK retries throttling (429) and
		// its own transient errors above this.
		Transport:        &http.Client{Transport: transport(o), Timeout: 65 * time.Second},
		PerRetryPolicies: []policy.Policy{chargePolicy{}},
	}}
	if o.Key != "" {
		cred, err := azcosmos.NewKeyCredential(o.Key)
		if err != nil {
			return nil, fmt.Errorf("cosmos key: %w", err)
		}
		return func() (*azcosmos.Client, error) { return azcosmos.NewClientWithKey(o.Endpoint, cred, opts) }, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("cosmos credential (Microsoft Entra ID): %w", err)
	}
	return func() (*azcosmos.Client, error) { return azcosmos.NewClient(o.Endpoint, cred, opts) }, nil
}

func transport(o Options) http.RoundTripper {
	if o.Transport != nil {
		return o.Transport
	}
	return NewTransport(o.MaxConnsPerHost)
}

// NewTransport returns the HTTP transport NewClient builds when
// Options.Transport is nil, keeping conns idle connections per host (100,
// cmd/handler's COSMOS_MAX_CONNS default, when conns <= 0). A caller that
// wraps the transport (to count round trips) wraps this one, so its client
// pools connections as the handler's does.
func NewTransport(conns int) *http.Transport {
	if conns <= 0 {
		conns = 100 // cmd/handler's COSMOS_MAX_CONNS default
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	// The default of 2 idle connections per host makes 16 concurrent
	// invocations open and close a connection for most requests.
	t.MaxIdleConns = conns * 2
	t.MaxIdleConnsPerHost = conns
	t.IdleConnTimeout = 90 * time.Second
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// CheckEndpoint accepts https endpoints, and http endpoints whose host is a
// loopback address: keys and orders never travel in clear text off the machine.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("COSMOS_ENDPOINT %q is not an absolute URL such as https://acct.documents.azure.com:443/", endpoint)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("COSMOS_ENDPOINT %q uses http:// for a host that is not loopback; use https://", endpoint)
	}
	return fmt.Errorf("COSMOS_ENDPOINT %q must use https:// (or http:// to a loopback emulator)", endpoint)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// statusOf returns the HTTP status of a Cosmos error, 0 when there was none.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// subStatusOf returns the x-ms-substatus of a Cosmos error, 0 when none.
func subStatusOf(err error) int {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		return 0
	}
	n, _ := strconv.Atoi(re.RawResponse.Header.Get("x-ms-substatus"))
	return n
}
