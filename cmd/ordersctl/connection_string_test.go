package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The Service Bus emulator is reached with its connection string, parsed
// by the SDK itself: the fake emulator is a TCP listener that must see the
// AMQP protocol header in the clear (UseDevelopmentEmulator=true turns TLS
// off) on the port the string names. It then hangs up, and the command
// fails at its own deadline (the SDK would go on redialling), naming the
// emulator.
func TestConnectionStringReachesTheEmulator(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	heard := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			heard <- nil // closed below: nothing connected
			return
		}
		head := make([]byte, 4)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.ReadFull(conn, head)
		conn.Close()
		heard <- head
	}()
	old := opTimeout
	opTimeout = 2 * time.Second
	t.Cleanup(func() { opTimeout = old })

	cs := strings.Replace(emulatorConnectionString, "sb://localhost", "sb://"+ln.Addr().String(), 1)
	code, _, errs := ctlEnv(t, map[string]string{"SERVICEBUS_CONNECTION_STRING": cs}, "parked", "list")
	if code != exitError || !strings.Contains(errs, "Service Bus emulator") || !strings.Contains(errs, context.DeadlineExceeded.Error()) {
		t.Errorf("exit %d, stderr %q; want a failure at the deadline that names the emulator", code, errs)
	}
	ln.Close()
	if head := <-heard; !bytes.Equal(head, []byte("AMQP")) {
		t.Errorf("the emulator's port heard %q, want the AMQP header in the clear", head)
	}
}

// What the SDK refuses, and a connection string that is not the
// emulator's, are usage errors: nothing is dialled.
func TestConnectionStringRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"emulator with an https endpoint": {[]string{"--connection-string", "Endpoint=https://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true"}, "sb://"},
		"no key":                          {[]string{"--connection-string", "Endpoint=sb://localhost;UseDevelopmentEmulator=true"}, "SharedAccessKeyName"},
		"an Azure key":                    {[]string{"--connection-string", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v"}, "Microsoft Entra ID"},
		"both ways at once":               {[]string{"--connection-string", emulatorConnectionString, "--namespace", testNamespace}, "not both"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errs := ctl(t, append([]string{"parked", "list"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, errs, exitUsage, tc.want)
			}
		})
	}
}

// A connection string is the emulator's as the SDK reads it (names in any
// case, the last value of a name wins): UseDevelopmentEmulator=true on a
// loopback endpoint. Anything else could carry an Azure key, which ordersctl
// refuses before it dials anything (checked directly: a check that let one
// through would make the command dial Azure and wait out its deadline).
func TestConnectionStringIsTheEmulatorsOnly(t *testing.T) {
	for name, cs := range map[string]string{
		"an Azure key, emulator said": "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
		"emulator false":              strings.Replace(emulatorConnectionString, "=true", "=false", 1),
		"emulator true, then false":   emulatorConnectionString + "UseDevelopmentEmulator=false",
		"emulator named in a value":   "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=UseDevelopmentEmulator=true",
		"an endpoint off the machine": "Endpoint=sb://10.0.0.7:5672;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
	} {
		if err := checkConnectionString(cs); err == nil || !strings.Contains(err.Error(), "Microsoft Entra ID") {
			t.Errorf("%s: %v, want it refused, naming Microsoft Entra ID", name, err)
		}
	}
	for _, cs := range []string{
		emulatorConnectionString,
		"endpoint=sb://127.0.0.1:5672;sharedaccesskeyname=k;sharedaccesskey=v;usedevelopmentemulator=True",
		"Endpoint=sb://[::1]:5672;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=false;UseDevelopmentEmulator=true",
	} {
		if err := checkConnectionString(cs); err != nil {
			t.Errorf("%s: %v, want it taken", cs, err)
		}
	}
}

// send says where the message goes in the emulator's mode.
func TestSendToTheEmulator(t *testing.T) {
	code, out, errs := ctl(t, "send", "--connection-string", emulatorConnectionString, "--dry-run", "../../bicep/deploy/sample-order.json")
	if code != exitOK || !strings.Contains(out, "would send to orders in the Service Bus emulator") {
		t.Errorf("exit %d (%s)\n%s", code, errs, out)
	}
}
